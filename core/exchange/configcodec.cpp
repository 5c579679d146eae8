#include "exchange/configcodec.h"

#include "spec/tuningproblem.h"

#include <algorithm>
#include <cmath>

namespace tilescope {

namespace {

// A list as JSON text, as nlohmann's dump() writes one.
std::string listJson(const expr::Value& v) {
    std::string out = "[";
    for (const auto& item : v.items()) {
        if (out.size() > 1)
            out += ',';
        out += recordedValue(item).json();
    }
    return out + ']';
}

} // namespace

ConfigValue recordedValue(const expr::Value& v) {
    switch (v.kind) {
    case expr::Kind::Int:
        return ConfigValue::ofInt(v.i);
    case expr::Kind::Float:
        return ConfigValue::ofFloat(v.f);
    case expr::Kind::Bool:
        return ConfigValue::ofBool(v.i != 0);
    case expr::Kind::Str:
        return ConfigValue::ofText(*v.s);
    case expr::Kind::List:
        return ConfigValue::compound(listJson(v));
    }
    return ConfigValue::null();
}

bool recordedEquals(const ConfigValue& recorded, const expr::Value& v) {
    switch (v.kind) {
    case expr::Kind::Int:
    case expr::Kind::Bool:
        if (recorded.isBool() || recorded.isInt())
            return recorded.asInt() == v.i;
        if (recorded.isFloat())
            return recorded.asNumber() == static_cast<double>(v.i);
        return false;
    case expr::Kind::Float:
        if (recorded.isNumber() || recorded.isBool())
            return recorded.asNumber() == v.f;
        return false;
    case expr::Kind::Str:
        return recorded.isText() && recorded.text() == *v.s;
    case expr::Kind::List:
        // Lists compare as JSON text: [1, 2] recorded as written by a JSON writer.
        return recorded.isCompound() && recorded.text() == listJson(v);
    }
    return false;
}

ConfigCodec::ConfigCodec(const ConfigSpace& space)
    : m_space(space) {
    for (int p = 0; p < space.parameterCount(); ++p)
        m_names.push_back(space.parameterName(p));
}

ConfigValues ConfigCodec::toValues(const Config& config) const {
    ConfigValues out;
    for (int p = 0; p < m_space.parameterCount(); ++p)
        out[m_names[static_cast<std::size_t>(p)]] = recordedValue(m_space.value(config, p));
    return out;
}

namespace {

// Recorded values -> value indices, for parameters `names` whose value lists `listOf(p)` gives.
template <typename ListOf>
std::optional<Config> decodeConfig(const std::vector<std::string>& names, const ListOf& listOf,
                                   const ConfigValues& values, std::string* why) {
    auto fail = [&](std::string text) -> std::optional<Config> {
        if (why)
            *why = std::move(text);
        return std::nullopt;
    };
    for (const auto& [name, value] : values)
        if (std::find(names.begin(), names.end(), name) == names.end())
            return fail("unknown parameter '" + name + "'");
    Config config(names.size(), 0);
    for (std::size_t p = 0; p < names.size(); ++p) {
        const ConfigValue* recorded = values.find(names[p]);
        if (!recorded)
            return fail("no value for parameter '" + names[p] + "'");
        const auto& list = listOf(p);
        std::size_t v = 0;
        while (v < list.size() && !recordedEquals(*recorded, list[v]))
            ++v;
        if (v == list.size())
            return fail("parameter '" + names[p] + "' has no value " + recorded->json());
        config[p] = static_cast<std::uint16_t>(v);
    }
    return config;
}

} // namespace

std::optional<Config> ConfigCodec::fromValues(const ConfigValues& values, std::string* why) const {
    return decodeConfig(
        m_names, [this](std::size_t p) -> decltype(auto) { return m_space.parameterValues(static_cast<int>(p)); },
        values, why);
}

std::optional<Config> configFromValues(const TuningProblem& problem, const ConfigValues& values, std::string* why) {
    std::vector<std::string> names;
    names.reserve(problem.parameters.size());
    for (const TuningParameter& p : problem.parameters)
        names.push_back(p.name);
    return decodeConfig(
        names, [&problem](std::size_t p) -> const std::vector<expr::Value>& { return problem.parameters[p].values; },
        values, why);
}

std::optional<std::uint64_t> ConfigCodec::indexOf(const ConfigValues& values) const {
    const auto config = fromValues(values);
    if (!config)
        return std::nullopt;
    return m_space.indexOf(*config);
}

} // namespace tilescope
