#pragma once

// ConfigValues to and from JSON, for the units that read and write JSON (the store, the
// exchange formats, the CLI's --json): the one place a recorded config meets nlohmann::json.
// Vocabulary headers include configvalues.h only.

#include "model/configvalues.h"

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string_view>

namespace tilescope {

/// A JSON value as a ConfigValue: integers (unsigned ones above 2^63 as floats), floats, bools,
/// strings, null; an array or object as its compact text.
ConfigValue configValueFromJson(const nlohmann::ordered_json& value);
/// The config of a JSON object (name -> value, in its order); an empty config for anything else.
ConfigValues configFromJson(const nlohmann::ordered_json& object);
/// The config of JSON text such as configJson() writes; nullopt when the text is no JSON object.
std::optional<ConfigValues> parseConfigJson(std::string_view text);

nlohmann::ordered_json toJson(const ConfigValue& value);
nlohmann::ordered_json toJson(const ConfigValues& config);

} // namespace tilescope
