#include "analysis/regime.h"

#include "base/textformat.h"
#include "expr/expr.h"
#include "spec/tuningproblem.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <deque>

namespace tilescope {

namespace {

bool endsWith(std::string_view s, std::string_view tail) {
    return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

} // namespace

ShapeSpread spreadOf(const std::vector<std::pair<double, double>>& timesAndNoise) {
    ShapeSpread sp;
    std::vector<double> times, spreads;
    for (const auto& [ms, noise] : timesAndNoise) {
        if (!(ms > 0))
            continue;
        times.push_back(ms);
        spreads.push_back(noise > 0 ? noise : 0.005);
    }
    sp.configs = times.size();
    if (times.empty())
        return sp;
    std::sort(times.begin(), times.end());
    std::sort(spreads.begin(), spreads.end());
    sp.bestMs = times.front();
    sp.medianMs = times[(times.size() - 1) / 2];
    sp.noise = spreads[(spreads.size() - 1) / 2];
    const double bound = sp.bestMs * (1.0 + 2.0 * sp.noise);
    sp.asGood = static_cast<std::size_t>(std::upper_bound(times.begin(), times.end(), bound) - times.begin());
    sp.gainOverMedian = sp.medianMs / sp.bestMs - 1.0;
    sp.flat = sp.asGood >= 2 && 4 * sp.asGood >= sp.configs;
    return sp;
}

std::optional<double> opsPerClockPerSm(std::string_view arch, std::string_view compute) {
    // Dense, per SM and clock: FP32 FMA counts 2. sm_80 (A100): 64 FP32 lanes, 1024 FP16 FMA
    // a clock on tensor cores, no FP8; sm_90 (H100, H200): twice the FP32 lanes, twice the tensor
    // rate, FP8 at twice FP16's; sm_100 (B200): the tensor rate doubled again. 0: none.
    struct Row {
        int sm;
        double fp32, tf32, half, fp8, int8;
    };
    static constexpr Row kRows[] = {
        {80, 128, 1024, 2048, 0, 4096},
        {90, 256, 2048, 4096, 8192, 8192},
        {100, 256, 4096, 8192, 16384, 16384},
    };
    if (arch.rfind("sm_", 0) != 0)
        return std::nullopt;
    int sm = 0;
    for (std::size_t i = 3; i < arch.size() && arch[i] >= '0' && arch[i] <= '9'; ++i)
        sm = sm * 10 + (arch[i] - '0');
    for (const Row& r : kRows) {
        if (r.sm != sm)
            continue;
        if (compute == "float")
            return r.fp32;
        if (compute == "tf32")
            return r.tf32;
        if (compute == "half" || compute == "bfloat16")
            return r.half;
        if (compute == "float8")
            return r.fp8 > 0 ? std::optional<double>(r.fp8) : std::nullopt;
        if (compute == "int8")
            return r.int8;
    }
    return std::nullopt;
}

std::optional<double> Roofline::memoryMs() const {
    if (!(bytes > 0) || !(bandwidthGBps > 0))
        return std::nullopt;
    return bytes / (bandwidthGBps * 1e9) * 1e3;
}

std::optional<double> Roofline::computeMs() const {
    if (!(flops > 0) || !(peakTflops > 0))
        return std::nullopt;
    return flops / (peakTflops * 1e12) * 1e3;
}

std::optional<double> Roofline::floorMs() const {
    const auto m = memoryMs();
    const auto c = computeMs();
    if (m && c)
        return std::max(*m, *c);
    return m ? m : c;
}

Roofline::Bound Roofline::bound() const {
    const auto m = memoryMs();
    const auto c = computeMs();
    if (!m || !c)
        return Bound::Unknown;
    return *m >= *c ? Bound::Memory : Bound::Compute;
}

std::optional<double> Roofline::fraction(double timeMs) const {
    const auto floor = floorMs();
    if (!floor || !(timeMs > 0))
        return std::nullopt;
    return *floor / timeMs;
}

Roofline rooflineOf(const TuningProblem& problem, std::size_t shapeIndex, const ConfigValues& config,
                    const std::string& provenanceJson, std::string_view arch) {
    Roofline r;
    std::string bytes, flops;
    if (problem.roofline) {
        bytes = problem.roofline->bytes;
        flops = problem.roofline->flops;
        r.compute = problem.roofline->compute;
    } else if (problem.objective) {
        const std::string& name = problem.objective->name;
        if (endsWith(name, "B/s"))
            bytes = problem.objective->count;
        else if (endsWith(name, "FLOP/s") || endsWith(name, "FLOPS"))
            flops = problem.objective->count;
    }
    if (shapeIndex < problem.shapes.size()) {
        try {
            expr::ValueList storage;
            std::vector<expr::Value> slots = problem.shapeSlots(shapeIndex, storage);
            std::deque<std::string> strings;
            for (std::size_t p = 0; p < problem.parameters.size() && p < slots.size(); ++p) {
                const ConfigValue* it = config.find(problem.parameters[p].name);
                if (!it)
                    continue;
                if (it->isBool())
                    slots[p] = expr::Value::ofBool(it->asBool());
                else if (it->isInt())
                    slots[p] = expr::Value::ofInt(it->asInt());
                else if (it->isFloat())
                    slots[p] = expr::Value::ofFloat(it->asNumber());
                else if (it->isText())
                    slots[p] = expr::Value::ofStr(&strings.emplace_back(it->text()));
            }
            const expr::Scope scope = problem.scope();
            auto evaluate = [&](const std::string& source) -> double {
                if (source.empty())
                    return 0;
                try {
                    const double v = expr::Expression::compile(source, scope).evaluateNumber(slots.data());
                    return v > 0 ? v : 0;
                } catch (const expr::ExprError&) {
                    return 0; // a config without the parameters the expression needs: not known
                }
            };
            r.bytes = evaluate(bytes);
            r.flops = evaluate(flops);
        } catch (const InputError&) {
            // a shape whose ProblemSize does not evaluate: no work known
        }
    }
    const nlohmann::json prov = nlohmann::json::parse(provenanceJson.empty() ? "{}" : provenanceJson, nullptr, false);
    nlohmann::json device = nlohmann::json::object();
    if (prov.is_object()) {
        if (const auto d = prov.find("devices");
            d != prov.end() && d->is_array() && !d->empty() && d->front().is_object())
            device = d->front();
    }
    auto number = [&](const char* key) {
        const auto it = device.find(key);
        return it != device.end() && it->is_number() ? it->get<double>() : 0.0;
    };
    r.bandwidthGBps = number("copy_gbps");
    std::string deviceArch(arch);
    if (const auto it = device.find("arch"); it != device.end() && it->is_string() && !it->get<std::string>().empty())
        deviceArch = it->get<std::string>();
    const double sms = number("sm_count");
    const double clockKHz = number("sm_clock_khz");
    if (!r.compute.empty() && sms > 0 && clockKHz > 0) {
        if (const auto ops = opsPerClockPerSm(deviceArch, r.compute))
            r.peakTflops = *ops * sms * clockKHz * 1e3 / 1e12;
    }
    return r;
}

std::string regimeVerdict(const ShapeSpread& spread, const Roofline& roofline) {
    std::string out;
    const auto fraction = roofline.fraction(spread.bestMs);
    const std::string bandwidth = formatDouble("%.0f GB/s", roofline.bandwidthGBps);
    const std::string peak = roofline.compute + " peak (" + formatDouble("%.0f TFLOP/s", roofline.peakTflops) + ")";
    switch (roofline.bound()) {
    case Roofline::Bound::Memory:
        out =
            "memory-bound: the best runs at " + formatPercent(*fraction) + " of the copy bandwidth (" + bandwidth + ")";
        break;
    case Roofline::Bound::Compute:
        out = "compute-bound: the best runs at " + formatPercent(*fraction) + " of the " + peak;
        break;
    case Roofline::Bound::Unknown:
        if (fraction && roofline.memoryMs())
            out = "the best runs at " + formatPercent(*fraction) + " of the copy bandwidth (" + bandwidth + ")";
        else if (fraction)
            out = "the best runs at " + formatPercent(*fraction) + " of the " + peak;
        break;
    }
    if (spread.configs == 0)
        return out;
    if (!out.empty())
        out += "; ";
    if (spread.flat)
        out += "flat: tuning does not help here, any of these " + std::to_string(spread.asGood) +
               " configs is as good (" + std::to_string(spread.asGood) + " of " + std::to_string(spread.configs) +
               " within twice the noise, " + formatDouble("%.2f %%", 100 * spread.noise) +
               ", of the best; the median config takes " + formatDouble("%.1f %%", 100 * spread.gainOverMedian) +
               " longer)";
    else
        out += "the best gains " + formatDouble("%.1f %%", 100 * spread.gainOverMedian) + " over the median of " +
               std::to_string(spread.configs) + " configs (noise " + formatDouble("%.2f %%", 100 * spread.noise) + ")";
    return out;
}

std::string earlyStopReason(const EarlyStop& rule, const ShapeSpread& spread, const Roofline& roofline) {
    if (spread.configs == 0)
        return {};
    if (rule.rooflineFraction > 0) {
        if (const auto f = roofline.fraction(spread.bestMs); f && *f >= rule.rooflineFraction)
            return "the best runs at " + formatPercent(*f) + " of the roofline: further search can gain at most " +
                   formatDouble("%.1f %%", 100 * (1 / *f - 1));
    }
    if (rule.flatAfter > 0 && spread.configs >= rule.flatAfter && spread.flat)
        return "flat: " + std::to_string(spread.asGood) + " of " + std::to_string(spread.configs) +
               " configs are within twice the noise (" + formatDouble("%.2f %%", 100 * spread.noise) +
               ") of the best, further search cannot pay";
    return {};
}

} // namespace tilescope
