#include "exchange/configcodec.h"

#include "spec/tuningproblem.h"

#include <algorithm>
#include <cmath>

namespace tilescope {

nlohmann::ordered_json valueToJson(const expr::Value& v) {
    switch (v.kind) {
    case expr::Kind::Int:
        return v.i;
    case expr::Kind::Float:
        return v.f;
    case expr::Kind::Bool:
        return v.i != 0;
    case expr::Kind::Str:
        return *v.s;
    case expr::Kind::List: {
        nlohmann::ordered_json list = nlohmann::ordered_json::array();
        for (const auto& item : v.items())
            list.push_back(valueToJson(item));
        return list;
    }
    }
    return nullptr;
}

bool jsonEqualsValue(const nlohmann::json& json, const expr::Value& v) {
    switch (v.kind) {
    case expr::Kind::Int:
    case expr::Kind::Bool:
        if (json.is_boolean())
            return (json.get<bool>() ? 1 : 0) == v.i;
        if (json.is_number_integer())
            return json.get<std::int64_t>() == v.i;
        if (json.is_number_float())
            return json.get<double>() == static_cast<double>(v.i);
        return false;
    case expr::Kind::Float:
        if (json.is_number())
            return json.get<double>() == v.f;
        if (json.is_boolean())
            return (json.get<bool>() ? 1.0 : 0.0) == v.f;
        return false;
    case expr::Kind::Str:
        return json.is_string() && json.get_ref<const std::string&>() == *v.s;
    case expr::Kind::List: {
        if (!json.is_array() || json.size() != v.listSize())
            return false;
        std::size_t i = 0;
        for (const auto& item : v.items())
            if (!jsonEqualsValue(json[i++], item))
                return false;
        return true;
    }
    }
    return false;
}

ConfigCodec::ConfigCodec(const ConfigSpace& space)
    : m_space(space) {
    for (int p = 0; p < space.parameterCount(); ++p)
        m_names.push_back(space.parameterName(p));
}

ConfigValues ConfigCodec::toValues(const Config& config) const {
    ConfigValues out = ConfigValues::object();
    for (int p = 0; p < m_space.parameterCount(); ++p)
        out[m_names[static_cast<std::size_t>(p)]] = valueToJson(m_space.value(config, p));
    return out;
}

namespace {

// Recorded values -> value indices, for parameters `names` whose value lists `listOf(p)` gives.
template <typename ListOf>
std::optional<Config> decodeConfig(const std::vector<std::string>& names, const ListOf& listOf,
                                   const nlohmann::ordered_json& values, std::string* why) {
    auto fail = [&](std::string text) -> std::optional<Config> {
        if (why)
            *why = std::move(text);
        return std::nullopt;
    };
    if (!values.is_object())
        return fail("not an object of parameter values");
    for (auto it = values.begin(); it != values.end(); ++it)
        if (std::find(names.begin(), names.end(), it.key()) == names.end())
            return fail("unknown parameter '" + it.key() + "'");
    Config config(names.size(), 0);
    for (std::size_t p = 0; p < names.size(); ++p) {
        const auto it = values.find(names[p]);
        if (it == values.end())
            return fail("no value for parameter '" + names[p] + "'");
        const auto& list = listOf(p);
        std::size_t v = 0;
        while (v < list.size() && !jsonEqualsValue(*it, list[v]))
            ++v;
        if (v == list.size())
            return fail("parameter '" + names[p] + "' has no value " + it->dump());
        config[p] = static_cast<std::uint16_t>(v);
    }
    return config;
}

} // namespace

std::optional<Config> ConfigCodec::fromValues(const nlohmann::ordered_json& values, std::string* why) const {
    return decodeConfig(
        m_names, [this](std::size_t p) -> decltype(auto) { return m_space.parameterValues(static_cast<int>(p)); },
        values, why);
}

std::optional<Config> configFromValues(const TuningProblem& problem, const nlohmann::ordered_json& values,
                                       std::string* why) {
    std::vector<std::string> names;
    names.reserve(problem.parameters.size());
    for (const TuningParameter& p : problem.parameters)
        names.push_back(p.name);
    return decodeConfig(
        names, [&problem](std::size_t p) -> const std::vector<expr::Value>& { return problem.parameters[p].values; },
        values, why);
}

std::optional<std::uint64_t> ConfigCodec::indexOf(const nlohmann::ordered_json& values) const {
    const auto config = fromValues(values);
    if (!config)
        return std::nullopt;
    return m_space.indexOf(*config);
}

} // namespace tilescope
