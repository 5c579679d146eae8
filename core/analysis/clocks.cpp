#include "analysis/clocks.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <utility>

namespace tilescope {

namespace {

// NVML's clocks event reasons that slow the GPU below what the work asks for.
struct Reason {
    std::uint64_t bit;
    const char* words;
};
constexpr Reason kSlowdowns[] = {
    {0x4, "power cap"},           {0x8, "hardware slowdown"}, {0x20, "thermal (software)"},
    {0x40, "thermal (hardware)"}, {0x80, "power brake"},      {0x10, "synchronised boost"},
};

// The SM clock may wander this much (relative to its maximum) without the session calling it moved.
constexpr double kSmTolerance = 0.02;

int medianOfInts(std::vector<int> v) {
    if (v.empty())
        return 0;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
}

} // namespace

void DeviceStateRange::add(const DeviceState& s) {
    if (s.smClockMHz <= 0)
        return;
    if (m_count == 0) {
        m_tempMin = m_tempMax = s.temperatureC;
    } else {
        m_tempMin = std::min(m_tempMin, s.temperatureC);
        m_tempMax = std::max(m_tempMax, s.temperatureC);
    }
    ++m_count;
    m_sm.push_back(s.smClockMHz);
    if (s.memoryClockMHz > 0)
        m_memory.push_back(s.memoryClockMHz);
    if (s.performanceState >= 0 && s.performanceState < 32)
        m_pstates |= 1u << s.performanceState;
    m_powerMax = std::max(m_powerMax, s.powerWatts);
    m_reasons |= s.clockReasons;
}

std::string slowdownReasons(std::uint64_t reasons) {
    std::string words;
    for (const Reason& r : kSlowdowns)
        if (reasons & r.bit)
            words += (words.empty() ? "" : ", ") + std::string(r.words);
    return words;
}

std::string DeviceStateRange::movedNote() const {
    if (m_count == 0)
        return {};
    std::string note;
    char buf[160];
    const auto [smMin, smMax] = std::minmax_element(m_sm.begin(), m_sm.end());
    if (*smMax > 0 && static_cast<double>(*smMax - *smMin) > kSmTolerance * *smMax) {
        std::snprintf(buf, sizeof buf, "the SM clock ranged %d-%d MHz", *smMin, *smMax);
        note = buf;
    }
    if (!m_memory.empty()) {
        const auto [memMin, memMax] = std::minmax_element(m_memory.begin(), m_memory.end());
        if (*memMin != *memMax) {
            std::snprintf(buf, sizeof buf, "the memory clock ranged %d-%d MHz", *memMin, *memMax);
            note += (note.empty() ? "" : "; ") + std::string(buf);
        }
    }
    if (m_pstates & (m_pstates - 1))
        note += (note.empty() ? "" : "; ") + std::string("the P-state changed");
    if (const std::string why = slowdownReasons(m_reasons); !why.empty())
        note += (note.empty() ? "" : "; ") + ("the GPU slowed itself down (" + why + ")");
    return note;
}

std::string DeviceStateRange::json() const {
    nlohmann::ordered_json j;
    if (m_count == 0)
        return "{}";
    const auto range = [](const std::vector<int>& v) {
        const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
        return nlohmann::ordered_json::array({*lo, medianOfInts(v), *hi});
    };
    j["samples"] = m_count;
    j["sm_clock_mhz"] = range(m_sm);
    if (!m_memory.empty())
        j["memory_clock_mhz"] = range(m_memory);
    j["temperature_c"] = {m_tempMin, m_tempMax};
    nlohmann::ordered_json pstates = nlohmann::ordered_json::array();
    for (int p = 0; p < 32; ++p)
        if (m_pstates & (1u << p))
            pstates.push_back(p);
    j["pstates"] = pstates;
    if (m_powerMax > 0)
        j["power_w_max"] = m_powerMax;
    j["clock_reasons"] = m_reasons;
    const std::string moved = movedNote();
    j["moved"] = !moved.empty();
    if (!moved.empty())
        j["moved_note"] = moved;
    return j.dump();
}

std::string measuredStateSentence(const std::string& provenanceJson, bool* moved) {
    if (moved)
        *moved = false;
    const nlohmann::json p = nlohmann::json::parse(provenanceJson.empty() ? "{}" : provenanceJson, nullptr, false);
    if (!p.is_object())
        return {};
    const auto it = p.find("measured_state");
    if (it == p.end() || !it->is_object() || !it->contains("sm_clock_mhz"))
        return {};
    const nlohmann::json& s = *it;
    const auto span = [](const nlohmann::json& v, const char* unit) -> std::string {
        if (!v.is_array() || v.size() < 2 || !v.front().is_number() || !v.back().is_number())
            return {};
        const long lo = v.front().get<long>();
        const long hi = v.back().get<long>();
        return (lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi)) + unit;
    };
    std::string text = "SM " + span(s["sm_clock_mhz"], " MHz");
    if (s.contains("memory_clock_mhz"))
        text += ", memory " + span(s["memory_clock_mhz"], " MHz");
    if (s.contains("temperature_c"))
        text += ", " + span(s["temperature_c"], " °C");
    if (const auto ps = s.find("pstates"); ps != s.end() && ps->is_array() && !ps->empty()) {
        std::string list;
        for (const auto& v : *ps)
            if (v.is_number_integer())
                list += (list.empty() ? "P" : "/P") + std::to_string(v.get<int>());
        text += ", " + list;
    }
    if (const auto w = s.find("power_w_max"); w != s.end() && w->is_number()) {
        char buf[40];
        std::snprintf(buf, sizeof buf, ", up to %.0f W", w->get<double>());
        text += buf;
    }
    const bool didMove = s.value("moved", false);
    if (moved)
        *moved = didMove;
    if (didMove)
        text += " — the clocks moved: " + s.value("moved_note", std::string("see the provenance"));
    return text;
}

std::string measurementContext(const std::string& provenanceJson) {
    const nlohmann::json p = nlohmann::json::parse(provenanceJson.empty() ? "{}" : provenanceJson, nullptr, false);
    if (!p.is_object() || !p.contains("timing") || !p["timing"].is_object())
        return {};
    const nlohmann::json& t = p["timing"];
    std::string context = t.value("context", std::string());
    if (context.empty() && t.contains("flush_l2") && t["flush_l2"].is_boolean())
        context = t["flush_l2"].get<bool>() ? "flush" : "warm";
    if (context == "flush")
        return "flush (each sample from a cold L2)";
    if (context == "warm")
        return "warm (samples back to back, the L2 holding what the kernel left)";
    if (context.rfind("pollute", 0) == 0)
        return context + " (written before each sample)";
    return context;
}

std::string provenanceCompiler(const std::string& provenanceJson) {
    const nlohmann::json p = nlohmann::json::parse(provenanceJson.empty() ? "{}" : provenanceJson, nullptr, false);
    if (!p.is_object())
        return {};
    for (const auto& [key, name] : {std::pair<const char*, const char*>{"nvrtc_version", "NVRTC"},
                                    {"nvcc_version", "nvcc"},
                                    {"triton_version", "Triton"}})
        if (const auto v = p.find(key); v != p.end() && v->is_string())
            return std::string(name) + " " + v->get<std::string>();
    return {};
}

std::string provenanceSentence(const SessionInfo& info) {
    std::string versions;
    const auto add = [](std::string& to, const std::string& part) { to += (to.empty() ? "" : ", ") + part; };
    const nlohmann::json p =
        nlohmann::json::parse(info.provenanceJson.empty() ? "{}" : info.provenanceJson, nullptr, false);
    if (p.is_object()) {
        if (const auto d = p.find("devices"); d != p.end() && d->is_array() && !d->empty() && d->front().is_object()) {
            const int driver = d->front().value("driver_version", 0);
            if (driver > 0)
                add(versions, "driver " + std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10));
        }
        if (const std::string compiler = provenanceCompiler(info.provenanceJson); !compiler.empty())
            add(versions, compiler);
        if (const auto t = p.find("tool_version"); t != p.end() && t->is_string())
            add(versions, "Tilescope " + t->get<std::string>());
    }
    std::string hashes;
    if (info.problemHash.size() >= 8)
        add(hashes, "problem " + info.problemHash.substr(0, 8));
    if (info.sourceHash.size() >= 8)
        add(hashes, "kernel source " + info.sourceHash.substr(0, 8));
    if (versions.empty())
        return hashes;
    return hashes.empty() ? versions : versions + "; " + hashes;
}

} // namespace tilescope
