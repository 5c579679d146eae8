#pragma once

// Between a space's configs (value indices) and recorded configs (JSON name -> value), so that
// results recorded by any tool, in any parameter order, find their config in a space.

#include "space/configspace.h"
#include "model/records.h"

#include <optional>
#include <string>
#include <vector>

namespace tilescope {

/// A parameter value as JSON: ints, floats, bools, strings (lists as arrays).
nlohmann::ordered_json valueToJson(const expr::Value& value);
/// Python's == between a recorded JSON value and a parameter value (64 == 64.0 == 64, True == 1).
bool jsonEqualsValue(const nlohmann::json& json, const expr::Value& value);

class TuningProblem;

/// The config (value indices into the parameters' value lists of `problem`) of recorded values,
/// without building the space: as ConfigCodec::fromValues, for callers that hold a problem only.
std::optional<Config> configFromValues(const TuningProblem& problem, const nlohmann::ordered_json& values,
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
    std::optional<Config> fromValues(const nlohmann::ordered_json& values, std::string* why = nullptr) const;
    /// The space index of recorded values, or nullopt (not a config of the space, or invalid).
    std::optional<std::uint64_t> indexOf(const nlohmann::ordered_json& values) const;

private:
    const ConfigSpace& m_space;
    std::vector<std::string> m_names;
};

} // namespace tilescope
