#include "model/configjson.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>

namespace tilescope {

ConfigValue configValueFromJson(const nlohmann::ordered_json& v) {
    if (v.is_boolean())
        return ConfigValue::ofBool(v.get<bool>());
    if (v.is_number_unsigned() &&
        v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        return ConfigValue::ofFloat(v.get<double>());
    if (v.is_number_integer())
        return ConfigValue::ofInt(v.get<std::int64_t>());
    if (v.is_number_float())
        return ConfigValue::ofFloat(v.get<double>());
    if (v.is_string())
        return ConfigValue::ofText(v.get<std::string>());
    if (v.is_null())
        return ConfigValue::null();
    return ConfigValue::compound(v.dump());
}

ConfigValues configFromJson(const nlohmann::ordered_json& object) {
    ConfigValues config;
    if (!object.is_object())
        return config;
    for (auto it = object.begin(); it != object.end(); ++it)
        config[it.key()] = configValueFromJson(it.value());
    return config;
}

std::optional<ConfigValues> parseConfigJson(std::string_view text) {
    const nlohmann::ordered_json json = nlohmann::ordered_json::parse(text, nullptr, false);
    if (!json.is_object())
        return std::nullopt;
    return configFromJson(json);
}

nlohmann::ordered_json toJson(const ConfigValue& v) {
    switch (v.kind()) {
    case ConfigValue::Kind::Int:
        return v.asInt();
    case ConfigValue::Kind::Float:
        return v.asNumber();
    case ConfigValue::Kind::Bool:
        return v.asBool();
    case ConfigValue::Kind::Text:
        return v.text();
    case ConfigValue::Kind::Compound:
        return nlohmann::ordered_json::parse(v.text(), nullptr, false);
    case ConfigValue::Kind::Null:
        break;
    }
    return nullptr;
}

nlohmann::ordered_json toJson(const ConfigValues& config) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    for (const auto& [name, value] : config)
        out[name] = toJson(value);
    return out;
}

} // namespace tilescope
