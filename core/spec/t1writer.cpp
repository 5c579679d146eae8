// Writing a TuningProblem back as T1 JSON: T1's fields in a fixed, readable order, then the
// fields this version did not know (kept by the reader), with "Tilescope" last.

#include "spec/t1common.h"
#include "spec/tuningproblem.h"

#include <cmath>

namespace tilescope {

namespace {

// A parameter value as JSON: an integer, a float, a boolean or a string.
nlohmann::ordered_json valueJson(const expr::Value& v) {
    switch (v.kind) {
    case expr::Kind::Float:
        return v.f;
    case expr::Kind::Bool:
        return v.i != 0;
    case expr::Kind::Str:
        return *v.s;
    default:
        return v.i;
    }
}

using spec::Json;

/// A number as the user would write it: 100 rather than 100.0 when it is whole.
Json number(double v) {
    if (std::isfinite(v) && std::trunc(v) == v && std::fabs(v) < 9007199254740992.0) // 2^53: exact
        return static_cast<std::int64_t>(v);
    return v;
}

/// An integer literal as a JSON integer, anything else as the expression text.
Json integerOrExpression(const std::string& text) {
    if (auto v = spec::parseIntegerLiteral(text))
        return *v;
    return text;
}

/// JSON text kept from a file (General's values, unknown fields); text that is not JSON (only
/// possible when set in memory) is written as a string rather than lost.
Json fromText(const std::string& text) {
    Json j = Json::parse(text, nullptr, false);
    if (j.is_discarded())
        return text;
    return j;
}

class Writer {
public:
    explicit Writer(const TuningProblem& p)
        : m_p(p) {}

    Json write() const {
        Json root = Json::object();
        if (!m_p.general.empty())
            root["General"] = general();
        root["ConfigurationSpace"] = configurationSpace();
        root["KernelSpecification"] = kernelSpecification();
        if (!m_p.searchName.empty() || !m_p.searchAttributes.empty() || m_p.unknownFields.count("/Search"))
            root["Search"] = search();
        if (!m_p.budget.empty()) {
            Json budget = Json::array();
            for (std::size_t i = 0; i < m_p.budget.size(); ++i) {
                Json b = Json::object();
                b["Type"] = m_p.budget[i].type;
                b["BudgetValue"] = number(m_p.budget[i].value);
                addUnknown(b, "/Budget/" + std::to_string(i));
                budget.push_back(std::move(b));
            }
            root["Budget"] = std::move(budget);
        }
        // Unknown top-level keys go before "Tilescope", which stays last.
        addUnknown(root, "");
        const bool hasShapes = m_p.shapes.size() > 1 || (m_p.shapes.size() == 1 && !m_p.shapes[0].dims.empty());
        if (hasShapes || m_p.objective || !m_p.metrics.empty() || !m_p.silencedWarnings.empty() || m_p.configList ||
            !m_p.partialOutputs.empty() || !m_p.verifyWithin.empty() || !m_p.compiler.empty() ||
            m_p.unknownFields.count("/Tilescope")) {
            root.erase("Tilescope");
            root["Tilescope"] = tilescope(hasShapes);
        }
        return root;
    }

private:
    void addUnknown(Json& obj, const std::string& ptr) const {
        auto it = m_p.unknownFields.find(ptr);
        if (it == m_p.unknownFields.end())
            return;
        const Json unknown = fromText(it->second);
        if (!unknown.is_object())
            return;
        for (const auto& [key, value] : unknown.items()) {
            if (!obj.contains(key))
                obj[key] = value;
        }
    }

    Json general() const {
        Json g = Json::object();
        // Schema order for the fields T1 defines, then the rest (alphabetically, as `general` keeps them).
        for (const char* key : {"FormatVersion", "LoggingLevel", "TimeUnit", "OutputFile", "OutputFormat"}) {
            if (auto it = m_p.general.find(key); it != m_p.general.end())
                g[key] = fromText(it->second);
        }
        for (const auto& [key, text] : m_p.general) {
            if (!g.contains(key))
                g[key] = fromText(text);
        }
        return g;
    }

    Json configurationSpace() const {
        Json cs = Json::object();
        Json params = Json::array();
        for (std::size_t i = 0; i < m_p.parameters.size(); ++i) {
            const TuningParameter& tp = m_p.parameters[i];
            Json p = Json::object();
            p["Name"] = tp.name;
            p["Type"] = tp.type;
            p["Values"] = tp.valuesAsArray ? Json::parse(tp.valuesText) : Json(tp.valuesText);
            addUnknown(p, "/ConfigurationSpace/TuningParameters/" + std::to_string(i));
            params.push_back(std::move(p));
        }
        cs["TuningParameters"] = std::move(params);
        // Always written: Kernel Tuner's loader reads Conditions without checking for it.
        Json conditions = Json::array();
        for (std::size_t i = 0; i < m_p.conditions.size(); ++i) {
            Json c = Json::object();
            c["Parameters"] = m_p.conditions[i].parameters;
            c["Expression"] = m_p.conditions[i].expression;
            addUnknown(c, "/ConfigurationSpace/Conditions/" + std::to_string(i));
            conditions.push_back(std::move(c));
        }
        cs["Conditions"] = std::move(conditions);
        addUnknown(cs, "/ConfigurationSpace");
        return cs;
    }

    Json threeD(const ThreeD& d, const std::string& ptr) const {
        Json j = Json::object();
        j["X"] = d.x;
        if (!d.y.empty())
            j["Y"] = d.y;
        if (!d.z.empty())
            j["Z"] = d.z;
        addUnknown(j, ptr);
        return j;
    }

    Json kernelSpecification() const {
        const std::string ptr = "/KernelSpecification";
        Json ks = Json::object();
        ks["Language"] = m_p.language;
        if (!m_p.compilerOptions.empty())
            ks["CompilerOptions"] = m_p.compilerOptions;
        ks["KernelName"] = m_p.kernelName;
        ks["KernelFile"] = m_p.kernelFile;
        if (!m_p.globalSizeType.empty())
            ks["GlobalSizeType"] = m_p.globalSizeType;
        if (!m_p.globalSize.x.empty())
            ks["GlobalSize"] = threeD(m_p.globalSize, ptr + "/GlobalSize");
        if (!m_p.localSize.x.empty())
            ks["LocalSize"] = threeD(m_p.localSize, ptr + "/LocalSize");
        if (!m_p.gridDivX.empty())
            ks["GridDivX"] = m_p.gridDivX;
        if (!m_p.gridDivY.empty())
            ks["GridDivY"] = m_p.gridDivY;
        if (!m_p.gridDivZ.empty())
            ks["GridDivZ"] = m_p.gridDivZ;
        if (!m_p.problemSize.empty()) {
            Json ps = Json::array();
            for (const auto& s : m_p.problemSize)
                ps.push_back(integerOrExpression(s));
            ks["ProblemSize"] = std::move(ps);
        }
        if (!m_p.sharedMemory.empty())
            ks["SharedMemory"] = integerOrExpression(m_p.sharedMemory);
        if (m_p.device) {
            Json d = Json::object();
            if (m_p.device->platformId)
                d["PlatformId"] = *m_p.device->platformId;
            if (m_p.device->deviceId)
                d["DeviceId"] = *m_p.device->deviceId;
            if (!m_p.device->name.empty())
                d["Name"] = m_p.device->name;
            addUnknown(d, ptr + "/Device");
            ks["Device"] = std::move(d);
        }
        if (m_p.profiling)
            ks["Profiling"] = *m_p.profiling;
        if (!m_p.simulationInput.empty())
            ks["SimulationInput"] = m_p.simulationInput;
        // Always written: Kernel Tuner's loader iterates Arguments without checking for it.
        Json args = Json::array();
        for (std::size_t i = 0; i < m_p.arguments.size(); ++i)
            args.push_back(argument(m_p.arguments[i], ptr + "/Arguments/" + std::to_string(i)));
        ks["Arguments"] = std::move(args);
        if (!m_p.referenceArguments.empty()) {
            Json refs = Json::array();
            for (std::size_t i = 0; i < m_p.referenceArguments.size(); ++i)
                refs.push_back(
                    referenceArgument(m_p.referenceArguments[i], ptr + "/ReferenceArguments/" + std::to_string(i)));
            ks["ReferenceArguments"] = std::move(refs);
        }
        addUnknown(ks, ptr);
        return ks;
    }

    Json argument(const KernelArgument& a, const std::string& ptr) const {
        Json j = Json::object();
        if (!a.name.empty())
            j["Name"] = a.name;
        j["Type"] = a.type;
        j["MemoryType"] = a.memoryType;
        if (!a.accessType.empty())
            j["AccessType"] = a.accessType;
        if (!a.size.empty())
            j["Size"] = a.sizeIsNumber ? integerOrExpression(a.size) : Json(a.size);
        if (a.typeSize)
            j["TypeSize"] = *a.typeSize;
        if (!a.fillType.empty())
            j["FillType"] = a.fillType;
        if (a.fillValue)
            j["FillValue"] = number(*a.fillValue);
        if (!a.dataSource.empty())
            j["DataSource"] = a.dataSource;
        if (a.randomSeed)
            j["RandomSeed"] = *a.randomSeed;
        if (!a.value.empty())
            j["Value"] = a.value;
        if (!a.memType.empty())
            j["MemType"] = a.memType;
        if (a.output)
            j["Output"] = *a.output ? 1 : 0;
        if (a.tensorMap) {
            Json list = Json::array();
            Json box = Json::array();
            for (const std::string& d : a.tensorMap->dims)
                list.push_back(integerOrExpression(d));
            for (const std::string& b : a.tensorMap->box)
                box.push_back(integerOrExpression(b));
            j["TensorMap"] = Json{{"Tensor", a.tensorMap->tensor}, {"Dims", list}, {"Box", box}};
            if (a.tensorMap->swizzle != 0)
                j["TensorMap"]["Swizzle"] = a.tensorMap->swizzle;
            addUnknown(j["TensorMap"], ptr + "/TensorMap");
        }
        addUnknown(j, ptr);
        return j;
    }

    Json referenceArgument(const ReferenceArgument& r, const std::string& ptr) const {
        Json j = Json::object();
        j["Name"] = r.name;
        j["TargetName"] = r.targetName;
        j["FillType"] = r.fillType;
        if (r.fillValue)
            j["FillValue"] = number(*r.fillValue);
        if (!r.dataSource.empty())
            j["DataSource"] = r.dataSource;
        if (r.randomSeed)
            j["RandomSeed"] = *r.randomSeed;
        if (!r.validationMethod.empty())
            j["ValidationMethod"] = r.validationMethod;
        if (r.validationThreshold)
            j["ValidationThreshold"] = number(*r.validationThreshold);
        addUnknown(j, ptr);
        return j;
    }

    Json search() const {
        Json s = Json::object();
        s["Name"] = m_p.searchName;
        if (!m_p.searchAttributes.empty()) {
            Json attrs = Json::array();
            for (std::size_t i = 0; i < m_p.searchAttributes.size(); ++i) {
                Json a = Json::object();
                const TuningProblem::SearchAttribute& attribute = m_p.searchAttributes[i];
                a["Name"] = attribute.name;
                a["Value"] = attribute.valueIsJson ? Json::parse(attribute.value) : Json(attribute.value);
                addUnknown(a, "/Search/Attributes/" + std::to_string(i));
                attrs.push_back(std::move(a));
            }
            s["Attributes"] = std::move(attrs);
        }
        addUnknown(s, "/Search");
        return s;
    }

    Json tilescope(bool hasShapes) const {
        Json ts = Json::object();
        if (hasShapes && !m_p.shapesSource.empty()) {
            ts["Shapes"] = Json::parse(m_p.shapesSource); // the generators, as written
        } else if (hasShapes) {
            Json shapes = Json::array();
            for (const Shape& shape : m_p.shapes) {
                Json s = Json::object();
                for (const auto& [name, value] : shape.dims)
                    s[name] = value;
                shapes.push_back(std::move(s));
            }
            ts["Shapes"] = std::move(shapes);
        }
        if (m_p.objective) {
            Json o = Json::object();
            o["Name"] = m_p.objective->name;
            o["Count"] = m_p.objective->count;
            o["Scale"] = number(m_p.objective->scale);
            if (m_p.objective->per != "second")
                o["Per"] = m_p.objective->per;
            addUnknown(o, "/Tilescope/Objective");
            ts["Objective"] = std::move(o);
        }
        if (m_p.roofline) {
            Json r = Json::object();
            if (!m_p.roofline->bytes.empty())
                r["Bytes"] = m_p.roofline->bytes;
            if (!m_p.roofline->flops.empty())
                r["Flops"] = m_p.roofline->flops;
            if (!m_p.roofline->compute.empty())
                r["Compute"] = m_p.roofline->compute;
            addUnknown(r, "/Tilescope/Roofline");
            ts["Roofline"] = std::move(r);
        }
        if (!m_p.metrics.empty())
            ts["Metrics"] = m_p.metrics;
        if (!m_p.objectives.empty())
            ts["Objectives"] = m_p.objectives;
        if (!m_p.silencedWarnings.empty())
            ts["Silence"] = m_p.silencedWarnings;
        if (m_p.configList) {
            Json list = Json::array();
            for (const Config& c : *m_p.configList) {
                Json entry = Json::array();
                for (std::size_t p = 0; p < c.size() && p < m_p.parameters.size(); ++p)
                    entry.push_back(valueJson(m_p.parameters[p].values.at(c[p])));
                list.push_back(std::move(entry));
            }
            ts["Configs"] = std::move(list);
        }
        if (!m_p.partialOutputs.empty())
            ts["Partial"] = m_p.partialOutputs;
        if (!m_p.verifyWithin.empty())
            ts["VerifyWithin"] = m_p.verifyWithin;
        if (!m_p.compiler.empty())
            ts["Compiler"] = m_p.compiler;
        addUnknown(ts, "/Tilescope");
        return ts;
    }

    const TuningProblem& m_p;
};

} // namespace

std::string TuningProblem::toJson() const {
    // Replace rather than throw on invalid UTF-8, which only text set in memory can hold.
    return Writer(*this).write().dump(2, ' ', false, Json::error_handler_t::replace);
}

} // namespace tilescope
