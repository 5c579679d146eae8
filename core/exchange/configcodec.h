#pragma once

// Between a space's configs (value indices) and recorded configs (name -> value), so that
// results recorded by any tool, in any parameter order, find their config in a space.

#include "model/records.h"
#include "space/configspace.h"

#include <optional>
#include <string>
#include <vector>

namespace tilescope {

/// A parameter value as recorded: ints, floats, bools, strings (a list as its JSON text).
ConfigValue recordedValue(const expr::Value& value);
/// Python's == between a recorded value and a parameter value (64 == 64.0 == 64, True == 1).
bool recordedEquals(const ConfigValue& recorded, const expr::Value& value);

class TuningProblem;

/// The config (value indices into the parameters' value lists of `problem`) of recorded values,
/// without building the space: as ConfigCodec::fromValues, for callers that hold a problem only.
std::optional<Config> configFromValues(const TuningProblem& problem, const ConfigValues& values,
                                       std::string* why = nullptr);

class ConfigCodec {
public:
    /// `space` must outlive the codec.
    explicit ConfigCodec(const ConfigSpace& space);

    const std::vector<std::string>& names() const { return m_names; }
    /// The values of `config`, in the space's parameter order.
    ConfigValues toValues(const Config& config) const;
    /// The config whose values these are (by name, any order; extra names are an error), or
    /// nullopt with `why` set: a missing or unknown name, a value not in the parameter's list.
    /// Validity under the conditions is not checked (ConfigSpace::indexOf does).
    std::optional<Config> fromValues(const ConfigValues& values, std::string* why = nullptr) const;
    /// The space index of recorded values, or nullopt (not a config of the space, or invalid).
    std::optional<std::uint64_t> indexOf(const ConfigValues& values) const;

private:
    const ConfigSpace& m_space;
    std::vector<std::string> m_names;
};

} // namespace tilescope
