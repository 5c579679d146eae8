#include "analysis/plausibility.h"

#include "analysis/regime.h"
#include "base/error.h"
#include "base/textformat.h"
#include "spec/launchplan.h"
#include "spec/tuningproblem.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>

namespace tilescope {

namespace {

// 4200 -> "4,200".
std::string grouped(double value) {
    std::string digits = formatDouble("%.0f", value);
    std::string out;
    const std::size_t start = !digits.empty() && digits[0] == '-' ? 1 : 0;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > start && (digits.size() - i) % 3 == 0)
            out += ',';
        out += digits[i];
    }
    return out;
}

std::string msText(double ms) {
    return formatDouble("%.4g ms", ms);
}

std::string bytesText(double bytes) {
    static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    std::size_t unit = 0;
    while (bytes >= 1024 && unit + 1 < std::size(kUnits)) {
        bytes /= 1024;
        ++unit;
    }
    return formatDouble("%.4g ", bytes) + kUnits[unit];
}

// The identifiers of an expression's text: a cheap, conservative test of what it names.
std::set<std::string> identifiersOf(const std::string& text) {
    std::set<std::string> names;
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (std::isalpha(c) || c == '_') {
            std::size_t j = i + 1;
            while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_'))
                ++j;
            names.insert(text.substr(i, j - i));
            i = j;
        } else if (std::isdigit(c)) {
            while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '.'))
                ++i; // a number, 1e3 and 0x10 included
        } else {
            ++i;
        }
    }
    return names;
}

bool namesAParameter(const std::string& text, const TuningProblem& problem) {
    const std::set<std::string> names = identifiersOf(text);
    return std::any_of(problem.parameters.begin(), problem.parameters.end(),
                       [&](const TuningParameter& p) { return names.count(p.name) > 0; });
}

} // namespace

std::optional<double> peakMemoryBandwidth(std::string_view deviceName) {
    // NVIDIA's data sheets; where a family has variants, its fastest, so that the floor of none
    // of them comes out too high. Longer names first: "GH200" before "H200", "A100" before "A10".
    struct Row {
        const char* name;
        double gbps;
    };
    static constexpr Row kRows[] = {
        {"B200", 8000}, {"GH200", 4900}, {"H200", 4800}, {"H100", 3900}, {"A100", 2039},
        {"V100", 1134}, {"L40S", 864},   {"L40", 864},   {"L4", 300},
    };
    std::string upper(deviceName);
    for (char& c : upper)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    for (const Row& r : kRows) {
        const std::string_view name(r.name);
        for (std::size_t at = upper.find(name); at != std::string::npos; at = upper.find(name, at + 1)) {
            // A whole word: "L4" is not the start of "L40", nor "H100" part of "GH100".
            const bool before = at == 0 || !std::isalnum(static_cast<unsigned char>(upper[at - 1]));
            const std::size_t end = at + name.size();
            const bool after = end == upper.size() || !std::isalnum(static_cast<unsigned char>(upper[end]));
            if (before && after)
                return r.gbps;
        }
    }
    return std::nullopt;
}

BandwidthFigure bandwidthFigure(const std::string& provenanceJson, const std::string& deviceName) {
    BandwidthFigure figure;
    const nlohmann::json prov = nlohmann::json::parse(provenanceJson.empty() ? "{}" : provenanceJson, nullptr, false);
    if (prov.is_object())
        if (const auto d = prov.find("devices"); d != prov.end() && d->is_array())
            for (const auto& device : *d)
                if (device.is_object())
                    if (const auto it = device.find("copy_gbps"); it != device.end() && it->is_number())
                        figure.gbps = std::max(figure.gbps, it->get<double>());
    if (figure.gbps > 0) {
        figure.source = "the measured copy bandwidth " + grouped(figure.gbps) + " GB/s";
        return figure;
    }
    if (const auto peak = peakMemoryBandwidth(deviceName)) {
        figure.gbps = *peak;
        figure.source = "the " + deviceName + "'s peak memory bandwidth " + grouped(*peak) +
                        " GB/s (from a table: no copy was measured)";
    }
    return figure;
}

std::string registerFileVerdict(std::int64_t registersPerThread, std::int64_t threadsPerBlock) {
    if (registersPerThread <= 0 || threadsPerBlock <= 0)
        return {};
    const double needed = double(registersPerThread) * double(threadsPerBlock);
    if (needed <= double(kRegistersPerBlock))
        return {};
    return std::to_string(registersPerThread) + " registers x " + std::to_string(threadsPerBlock) +
           " threads = " + grouped(needed) + " registers, more than the " + grouped(double(kRegistersPerBlock)) +
           " a thread block may hold: the launch could not have run, whatever time was recorded";
}

// PlausibilityCheck

struct PlausibilityCheck::Impl {
    const TuningProblem* problem = nullptr;
    std::size_t shapeIndex = 0;
    std::string provenance;
    std::string arch;
    BandwidthFigure bandwidth;
    std::optional<double> outputMs; // the whole write time at the bandwidth (before kFloorFraction)
    std::string outputsText;        // "64 MiB in 'out'"
    bool roofline = false;          // the problem gives one
    bool rooflineVaries = false;    // its expressions use parameters: computed per config
    std::optional<Roofline> fixedRoofline;
    std::string note;

    Roofline rooflineFor(const ConfigValues& config) const {
        Roofline r = rooflineOf(*problem, shapeIndex, config, provenance, arch);
        if (!(r.bandwidthGBps > 0))
            r.bandwidthGBps = bandwidth.gbps; // a device known by name
        return r;
    }
};

PlausibilityCheck::PlausibilityCheck(const TuningProblem& problem, std::size_t shapeIndex,
                                     const std::string& provenanceJson, const std::string& deviceName,
                                     std::string_view arch)
    : m_impl(std::make_unique<Impl>()) {
    Impl& d = *m_impl;
    d.problem = &problem;
    d.shapeIndex = shapeIndex;
    d.provenance = provenanceJson;
    d.arch = std::string(arch);
    d.bandwidth = bandwidthFigure(provenanceJson, deviceName);
    std::vector<std::string> notes;

    // The outputs: the buffers the problem flags Output where it flags any, else those it says
    // the kernel writes (WriteOnly, ReadWrite). A buffer without an AccessType may be an input,
    // and one whose Size uses a parameter (max(P)) may be written only in part: neither counts.
    double bytes = 0;
    std::vector<std::string> names;
    std::size_t leftOut = 0;
    try {
        const LaunchPlanner planner(problem, shapeIndex);
        const bool flagged = std::any_of(problem.arguments.begin(), problem.arguments.end(),
                                         [](const KernelArgument& a) { return a.output.has_value(); });
        for (const ArgumentSpec& s : planner.arguments()) {
            if (!s.isVector() || !s.verify || s.bytes() <= 0)
                continue;
            const KernelArgument& a = problem.arguments[s.index];
            if ((!flagged && a.accessType.empty()) || namesAParameter(a.size, problem)) {
                ++leftOut;
                continue;
            }
            bytes += static_cast<double>(s.bytes());
            names.push_back(s.name.empty() ? "argument " + std::to_string(s.index) : "'" + s.name + "'");
        }
    } catch (const std::exception& e) {
        notes.push_back(std::string("the outputs' sizes are not known (") + e.what() + ")");
    }
    if (bytes > 0) {
        d.outputsText = bytesText(bytes) + " in ";
        for (std::size_t i = 0; i < names.size(); ++i)
            d.outputsText += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
        if (d.bandwidth.gbps > 0)
            d.outputMs = bytes / (d.bandwidth.gbps * 1e9) * 1e3;
    }
    if (leftOut > 0)
        notes.push_back(std::to_string(leftOut) +
                        " output buffer(s) left out of the floor (no AccessType, or a Size that uses a parameter)");

    if (problem.roofline) {
        d.roofline = true;
        d.rooflineVaries =
            namesAParameter(problem.roofline->bytes, problem) || namesAParameter(problem.roofline->flops, problem);
        if (!d.rooflineVaries)
            d.fixedRoofline = d.rooflineFor(ConfigValues{});
    }
    if (!(d.bandwidth.gbps > 0))
        notes.push_back(
            "no copy bandwidth was measured and the device" +
            (deviceName.empty() ? std::string(" is not known") : " '" + deviceName + "' is not in the table of peaks") +
            ": the time the outputs take to write is not known");
    if (!active() && notes.empty())
        notes.push_back("the problem names no output buffer and no roofline");
    if (!active())
        d.note = "times are not checked against a floor: ";
    for (std::size_t i = 0; i < notes.size(); ++i)
        d.note += (i == 0 ? "" : "; ") + notes[i];
}

PlausibilityCheck::~PlausibilityCheck() = default;
PlausibilityCheck::PlausibilityCheck(PlausibilityCheck&&) noexcept = default;
PlausibilityCheck& PlausibilityCheck::operator=(PlausibilityCheck&&) noexcept = default;

bool PlausibilityCheck::active() const {
    const Impl& d = *m_impl;
    if (d.outputMs)
        return true;
    if (!d.roofline)
        return false;
    return d.rooflineVaries || (d.fixedRoofline && d.fixedRoofline->floorMs());
}

const std::string& PlausibilityCheck::note() const {
    return m_impl->note;
}

std::optional<TimeFloor> PlausibilityCheck::floor(const ConfigValues& config) const {
    const Impl& d = *m_impl;
    std::optional<TimeFloor> best;
    if (d.outputMs) {
        TimeFloor f;
        f.ms = kFloorFraction * *d.outputMs;
        f.how = "half the time its outputs take to write at " + d.bandwidth.source + ": " + d.outputsText;
        best = f;
    }
    if (d.roofline) {
        const Roofline r = d.fixedRoofline ? *d.fixedRoofline : d.rooflineFor(config);
        if (const auto ms = r.floorMs(); ms && (!best || kFloorFraction * *ms > best->ms)) {
            TimeFloor f;
            f.ms = kFloorFraction * *ms;
            const bool memory = r.memoryMs() && (!r.computeMs() || *r.memoryMs() >= *r.computeMs());
            f.how = memory ? "half the problem's roofline: " + bytesText(r.bytes) + " (Tilescope.Roofline Bytes) at " +
                                 (d.bandwidth.gbps > 0 && r.bandwidthGBps == d.bandwidth.gbps
                                      ? d.bandwidth.source
                                      : grouped(r.bandwidthGBps) + " GB/s")
                           : "half the problem's roofline: " + formatDouble("%.4g", r.flops) +
                                 " operations (Tilescope.Roofline Flops) at the " + r.compute + " peak of " +
                                 grouped(r.peakTflops) + " TFLOP/s";
            best = f;
        }
    }
    return best;
}

std::string PlausibilityCheck::verdict(const ConfigValues& config, double medianMs) const {
    if (!(medianMs > 0))
        return {};
    const auto f = floor(config);
    if (!f || !(medianMs < f->ms))
        return {};
    return msText(medianMs) + " is below " + msText(f->ms) + ", " + f->how +
           "; a kernel that returns early or writes nothing looks like this";
}

// checkRecorded

namespace {

std::optional<std::int64_t> integerOf(const ConfigValues& config, const char* name) {
    const ConfigValue* it = config.find(name);
    if (!it || !it->isNumber())
        return std::nullopt;
    const double v = it->asNumber();
    return v >= 1 && v <= double(kRegistersPerBlock) ? std::optional<std::int64_t>(static_cast<std::int64_t>(v))
                                                     : std::nullopt;
}

// Threads per block of a recorded result: its own block size, else Kernel Tuner's block_size_x
// (y and z 1 where they are not parameters) when the config has it.
std::int64_t threadsOf(const ResultRecord& r) {
    if (r.blockSize && *r.blockSize > 0)
        return *r.blockSize;
    const auto x = integerOf(r.config, "block_size_x");
    if (!x)
        return 0;
    return *x * integerOf(r.config, "block_size_y").value_or(1) * integerOf(r.config, "block_size_z").value_or(1);
}

std::int64_t registersOf(const ResultRecord& r) {
    if (r.measurement.staticInfo && r.measurement.staticInfo->registers > 0)
        return r.measurement.staticInfo->registers;
    for (const Metric& m : r.measurement.metrics)
        if (m.name == "num_regs" && m.value >= 1 && m.value <= double(kRegistersPerBlock))
            return static_cast<std::int64_t>(m.value);
    return 0;
}

// The problem's shape the recording was made at: its shape index, else the shape whose dims or
// ProblemSize it recorded; nullopt when none matches.
std::optional<std::size_t> shapeOf(const SessionInfo& info, const TuningProblem& problem) {
    const std::size_t shapes = std::max<std::size_t>(1, problem.shapes.size());
    auto sorted = [](std::vector<std::pair<std::string, std::int64_t>> dims) {
        std::sort(dims.begin(), dims.end());
        return dims;
    };
    for (std::size_t i = 0; i < shapes; ++i) {
        if (info.shapeIndex && static_cast<std::size_t>(*info.shapeIndex) != i)
            continue;
        if (!info.shape.empty() && i < problem.shapes.size()) {
            if (sorted(info.shape) == sorted(problem.shapes[i].dims))
                return i;
            continue;
        }
        if (!info.problemSize.empty() && !problem.problemSize.empty()) {
            try {
                expr::ValueList storage;
                problem.shapeSlots(i, storage);
                std::vector<std::int64_t> size;
                for (const auto& v : storage.items())
                    size.push_back(v.i);
                if (size == info.problemSize)
                    return i;
            } catch (const InputError&) {
            }
            continue;
        }
        if (info.shapeIndex || shapes == 1)
            return i; // nothing to compare: the index (or the only shape) it names
    }
    return std::nullopt;
}

} // namespace

PlausibilityReport checkRecorded(SessionData& data, const TuningProblem* problem) {
    PlausibilityReport report;
    std::optional<TuningProblem> carried;
    if (!problem && !data.info.problemJson.empty()) {
        try {
            carried = TuningProblem::parse(data.info.problemJson, "the recording's problem", {});
            problem = &*carried;
        } catch (const std::exception&) {
            // a problem this version cannot read: the sizes stay unknown
        }
    }
    std::optional<PlausibilityCheck> check;
    std::string floorNote;
    if (!problem) {
        floorNote = "times are not checked against a floor: the problem's sizes are not known";
    } else if (const auto shape = shapeOf(data.info, *problem)) {
        check.emplace(*problem, *shape, data.info.provenanceJson, data.info.deviceName, data.info.arch);
        floorNote = check->note();
        if (!check->active())
            check.reset();
    } else {
        floorNote = "times are not checked against a floor: the recording's shape is none of the problem's";
    }

    std::string first;
    std::size_t checked = 0;
    for (ResultRecord& r : data.results) {
        if (!r.ok())
            continue;
        ++checked;
        std::string why = registerFileVerdict(registersOf(r), threadsOf(r));
        if (why.empty() && check)
            why = check->verdict(r.config, r.timeMs());
        if (why.empty())
            continue;
        r.measurement.status = ResultStatus::Implausible;
        r.measurement.message = why;
        r.objective.reset();
        if (first.empty())
            first = describeConfig(r.config) + ": " + why;
        ++report.implausible;
    }
    if (report.implausible > 0)
        report.note = std::to_string(report.implausible) + " of " + std::to_string(checked) +
                      " timed results are implausible (the first: " + first + ")";
    if (!floorNote.empty() && checked > 0)
        report.note += (report.note.empty() ? "" : "; ") + floorNote;
    return report;
}

} // namespace tilescope
