#include "measure/cuda/workerprotocol.h"

#include "compile/compilewire.h"

#include <nlohmann/json.hpp>

#include <poll.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace tilescope::worker {

namespace {

using nlohmann::json;

// A compiler's launch as JSON (null when the problem's expressions decide it), and back.
json launchJson(const std::optional<LaunchMetadata>& launch) {
    if (!launch)
        return nullptr;
    json scratch = json::array();
    for (const LaunchMetadata::Scratch& s : launch->scratch)
        scratch.push_back(json{{"bytes_per_block", s.bytesPerBlock}, {"align", s.align}});
    return json{{"threads", launch->threadsPerBlock},
                {"shared", launch->sharedBytes},
                {"cluster", launch->clusterSize},
                {"scratch", std::move(scratch)},
                {"argument_types", launch->argumentTypes}};
}

LaunchMetadata launchOf(const json& j) {
    LaunchMetadata launch;
    launch.threadsPerBlock = j.value("threads", 0);
    launch.sharedBytes = j.value("shared", std::int64_t{0});
    launch.clusterSize = j.value("cluster", 1);
    for (const json& s : j.value("scratch", json::array()))
        launch.scratch.push_back({s.value("bytes_per_block", std::int64_t{0}), s.value("align", std::int64_t{1})});
    launch.argumentTypes = j.value("argument_types", std::vector<std::string>());
    return launch;
}

constexpr std::uint32_t kMaxPart = 1u << 30;

void putU32(char* out, std::uint32_t v) {
    for (int i = 0; i < 4; ++i)
        out[i] = static_cast<char>((v >> (8 * i)) & 0xFFu);
}

std::uint32_t getU32(const char* in) {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i)
        v |= static_cast<std::uint32_t>(static_cast<unsigned char>(in[i])) << (8 * i);
    return v;
}

bool writeAll(int fd, const char* data, std::size_t size) {
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        data += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

enum class Part { Ok, Closed, Broken, TimedOut };

// Reads exactly `size` bytes before `deadline` (none when timeoutMs < 0). `started` tells
// whether a frame has begun (then an early end is Broken, not Closed).
Part readAll(int fd, char* data, std::size_t size, int timeoutMs, std::chrono::steady_clock::time_point deadline,
             bool started) {
    while (size > 0) {
        if (timeoutMs >= 0) {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            pollfd p{fd, POLLIN, 0};
            const int wait = static_cast<int>(std::max<std::int64_t>(0, left.count()));
            const int rc = ::poll(&p, 1, wait);
            if (rc < 0 && errno == EINTR)
                continue;
            if (rc == 0)
                return Part::TimedOut;
            if (rc < 0)
                return started ? Part::Broken : Part::Closed;
        }
        const ssize_t n = ::read(fd, data, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return started ? Part::Broken : Part::Closed;
        data += n;
        size -= static_cast<std::size_t>(n);
        started = true;
    }
    return Part::Ok;
}

Frame frameOf(const json& header, std::vector<char> blob = {}) {
    return Frame{header.dump(), std::move(blob)};
}

json parseHeader(const Frame& frame, const char* type) {
    json header = json::parse(frame.header, nullptr, false);
    if (header.is_discarded() || !header.is_object())
        throw std::runtime_error("a worker message is not a JSON object");
    if (header.value("type", std::string()) != type)
        throw std::runtime_error(std::string("expected a '") + type + "' message, got '" +
                                 header.value("type", std::string()) + "'");
    return header;
}

// Doubles that JSON cannot hold (NaN, infinities) travel as strings.
json number(double v) {
    if (std::isnan(v))
        return "nan";
    if (std::isinf(v))
        return v > 0 ? "inf" : "-inf";
    return v;
}

double numberOf(const json& j) {
    if (j.is_number())
        return j.get<double>();
    if (j.is_string()) {
        const std::string s = j.get<std::string>();
        if (s == "inf")
            return std::numeric_limits<double>::infinity();
        if (s == "-inf")
            return -std::numeric_limits<double>::infinity();
        return std::numeric_limits<double>::quiet_NaN();
    }
    throw std::runtime_error("a worker message holds a number of the wrong type");
}

json deviceJson(const DeviceInfo& d) {
    return json{{"ordinal", d.ordinal},
                {"name", d.name},
                {"uuid", d.uuid},
                {"arch", d.arch},
                {"sm_count", d.smCount},
                {"l2_bytes", d.l2Bytes},
                {"global_memory_bytes", d.globalMemoryBytes},
                {"sm_clock_khz", d.smClockKHz},
                {"memory_clock_khz", d.memoryClockKHz},
                {"driver_version", d.driverVersion},
                {"cupti_note", d.cuptiNote},
                {"copy_gbps", d.copyGBps},
                {"state_note", d.stateNote}};
}

DeviceInfo deviceOf(const json& j) {
    DeviceInfo d;
    d.ordinal = j.value("ordinal", -1);
    d.name = j.value("name", std::string());
    d.uuid = j.value("uuid", std::string());
    d.arch = j.value("arch", std::string());
    d.smCount = j.value("sm_count", 0);
    d.l2Bytes = j.value("l2_bytes", std::int64_t{0});
    d.globalMemoryBytes = j.value("global_memory_bytes", std::int64_t{0});
    d.smClockKHz = j.value("sm_clock_khz", 0);
    d.memoryClockKHz = j.value("memory_clock_khz", 0);
    d.driverVersion = j.value("driver_version", 0);
    d.cuptiNote = j.value("cupti_note", std::string());
    d.copyGBps = j.value("copy_gbps", 0.0);
    d.stateNote = j.value("state_note", std::string());
    return d;
}

json staticJson(const StaticInfo& s) {
    return tilescope::staticInfoJson(s);
}

StaticInfo staticOf(const json& j) {
    return tilescope::staticInfoOf(j);
}

json measurementJson(const Measurement& m) {
    json metrics = json::array();
    for (const Metric& metric : m.metrics)
        metrics.push_back(json{{"name", metric.name}, {"value", number(metric.value)}});
    json j{{"status", std::string(statusName(m.status))},
           {"time",
            {{"median_ms", number(m.time.medianMs)},
             {"min_ms", number(m.time.minMs)},
             {"max_ms", number(m.time.maxMs)},
             {"stdev_ms", number(m.time.stdevMs)},
             {"samples", m.time.samples},
             {"ci_low_ms", number(m.time.ciLowMs)},
             {"ci_high_ms", number(m.time.ciHighMs)}}},
           {"metrics", std::move(metrics)},
           {"compile_seconds", number(m.compileSeconds)},
           {"benchmark_seconds", number(m.benchmarkSeconds)},
           {"message", m.message},
           {"device", m.device}};
    if (m.verificationError)
        j["verification_error"] = number(*m.verificationError);
    if (m.staticInfo)
        j["static_info"] = staticJson(*m.staticInfo);
    if (m.deviceState) {
        const DeviceState& d = *m.deviceState;
        j["device_state"] = json{{"sm_clock_mhz", d.smClockMHz},    {"memory_clock_mhz", d.memoryClockMHz},
                                 {"temperature_c", d.temperatureC}, {"pstate", d.performanceState},
                                 {"power_w", number(d.powerWatts)}, {"clock_reasons", d.clockReasons}};
    }
    if (m.parts != BenchmarkParts{}) {
        const BenchmarkParts& b = m.parts;
        j["parts"] = json{{"check_s", number(b.check)},
                          {"timing_s", number(b.timing)},
                          {"warmup_s", number(b.warmup)},
                          {"samples", b.samples},
                          {"counters_s", number(b.counters)},
                          {"energy_s", number(b.energy)},
                          {"compared_on_device", b.comparedOnDevice},
                          {"downloaded", b.downloaded},
                          {"raced", b.raced},
                          {"profiled", b.profiled},
                          {"unrestored", b.unrestored},
                          {"batched", b.batched},
                          {"batch_launches", b.batchLaunches}};
    }
    if (!m.samplesMs.empty()) {
        json samples = json::array();
        for (double ms : m.samplesMs)
            samples.push_back(number(ms));
        j["samples_ms"] = std::move(samples);
    }
    return j;
}

Measurement measurementOf(const json& j) {
    Measurement m;
    const std::optional<ResultStatus> status = parseStatus(j.at("status").get<std::string>());
    if (!status)
        throw std::runtime_error("a worker result has an unknown status '" + j.at("status").get<std::string>() + "'");
    m.status = *status;
    const json& t = j.at("time");
    m.time.medianMs = numberOf(t.at("median_ms"));
    m.time.minMs = numberOf(t.at("min_ms"));
    m.time.maxMs = numberOf(t.at("max_ms"));
    m.time.stdevMs = numberOf(t.at("stdev_ms"));
    m.time.samples = t.at("samples").get<int>();
    if (t.contains("ci_low_ms") && t.contains("ci_high_ms")) {
        m.time.ciLowMs = numberOf(t.at("ci_low_ms"));
        m.time.ciHighMs = numberOf(t.at("ci_high_ms"));
    }
    for (const json& metric : j.at("metrics"))
        m.metrics.push_back(Metric{metric.at("name").get<std::string>(), numberOf(metric.at("value"))});
    m.compileSeconds = numberOf(j.at("compile_seconds"));
    m.benchmarkSeconds = numberOf(j.at("benchmark_seconds"));
    m.message = j.value("message", std::string());
    m.device = j.value("device", -1);
    if (j.contains("verification_error"))
        m.verificationError = numberOf(j.at("verification_error"));
    if (const auto b = j.find("parts"); b != j.end()) {
        m.parts.check = numberOf(b->at("check_s"));
        m.parts.timing = numberOf(b->at("timing_s"));
        m.parts.warmup = b->contains("warmup_s") ? numberOf(b->at("warmup_s")) : 0.0;
        m.parts.samples = b->value("samples", 0);
        m.parts.counters = numberOf(b->at("counters_s"));
        m.parts.energy = numberOf(b->at("energy_s"));
        m.parts.comparedOnDevice = b->value("compared_on_device", 0);
        m.parts.downloaded = b->value("downloaded", 0);
        m.parts.raced = b->value("raced", 0);
        m.parts.profiled = b->value("profiled", 0);
        m.parts.unrestored = b->value("unrestored", 0);
        m.parts.batched = b->value("batched", 0);
        m.parts.batchLaunches = b->value("batch_launches", 0);
    }
    if (j.contains("static_info"))
        m.staticInfo = staticOf(j.at("static_info"));
    if (const auto d = j.find("device_state"); d != j.end()) {
        DeviceState s;
        s.smClockMHz = d->value("sm_clock_mhz", 0);
        s.memoryClockMHz = d->value("memory_clock_mhz", 0);
        s.temperatureC = d->value("temperature_c", 0);
        s.performanceState = d->value("pstate", -1);
        s.powerWatts = d->contains("power_w") ? numberOf(d->at("power_w")) : 0.0;
        s.clockReasons = d->value("clock_reasons", std::uint64_t{0});
        m.deviceState = s;
    }
    if (const auto s = j.find("samples_ms"); s != j.end())
        for (const json& v : *s)
            m.samplesMs.push_back(numberOf(v));
    return m;
}

json timingJson(const TimingRule& t) {
    return json{{"min_samples", t.minSamples},          {"max_samples", t.maxSamples},
                {"target_rel_stdev", t.targetRelStdev}, {"warmup_seconds", t.warmupSeconds},
                {"max_seconds", t.maxSeconds},          {"flush_l2", t.flushL2},
                {"slower_than_ms", t.slowerThanMs},     {"profile_under_ms", t.profileUnderMs},
                {"l2_write_bytes", t.l2WriteBytes},     {"keep_samples", t.keepSamples}};
}

TimingRule timingOf(const json& j) {
    TimingRule t;
    t.minSamples = j.value("min_samples", t.minSamples);
    t.maxSamples = j.value("max_samples", t.maxSamples);
    t.targetRelStdev = j.value("target_rel_stdev", t.targetRelStdev);
    t.warmupSeconds = j.value("warmup_seconds", t.warmupSeconds);
    t.maxSeconds = j.value("max_seconds", t.maxSeconds);
    t.flushL2 = j.value("flush_l2", t.flushL2);
    t.slowerThanMs = j.value("slower_than_ms", t.slowerThanMs);
    t.profileUnderMs = j.value("profile_under_ms", t.profileUnderMs);
    t.l2WriteBytes = j.value("l2_write_bytes", t.l2WriteBytes);
    t.keepSamples = j.value("keep_samples", t.keepSamples);
    return t;
}

} // namespace

std::string l2ContextName(const TimingRule& rule) {
    if (!rule.flushL2)
        return "warm";
    if (rule.l2WriteBytes <= 0)
        return "flush";
    const double mib = static_cast<double>(rule.l2WriteBytes) / (1 << 20);
    char buf[64];
    std::snprintf(buf, sizeof buf, "pollute %g MiB", mib);
    return buf;
}

std::string setL2Context(std::string_view text, TimingRule& rule) {
    if (text == "flush" || text == "cold") {
        rule.flushL2 = true;
        rule.l2WriteBytes = 0;
        return {};
    }
    if (text == "warm") {
        rule.flushL2 = false;
        rule.l2WriteBytes = 0;
        return {};
    }
    constexpr std::string_view kPollute = "pollute:";
    if (text.substr(0, kPollute.size()) != kPollute)
        return "unknown context '" + std::string(text) + "': use flush, warm or pollute:SIZE (e.g. pollute:16MiB)";
    std::string size(text.substr(kPollute.size()));
    std::size_t used = 0;
    double value = 0;
    try {
        value = std::stod(size, &used);
    } catch (const std::exception&) {
        return "'" + size + "' is not a size: write bytes or a number with K, M or G (e.g. 16MiB)";
    }
    std::string unit = size.substr(used);
    for (char& c : unit)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    double scale = 0;
    if (unit.empty() || unit == "B")
        scale = 1;
    else if (unit == "K" || unit == "KB" || unit == "KIB")
        scale = 1024.0;
    else if (unit == "M" || unit == "MB" || unit == "MIB")
        scale = 1024.0 * 1024.0;
    else if (unit == "G" || unit == "GB" || unit == "GIB")
        scale = 1024.0 * 1024.0 * 1024.0;
    if (scale == 0)
        return "unknown unit '" + size.substr(used) + "' in '" + size + "': use K, M or G (binary)";
    const double bytes = value * scale;
    if (!(bytes >= 4) || bytes > 64.0 * (1ll << 30))
        return "the polluter size '" + size + "' must be between 4 bytes and 64 GiB";
    rule.flushL2 = true;
    rule.l2WriteBytes = static_cast<std::int64_t>(bytes);
    return {};
}

namespace {

// The whole decode of a message is guarded: a JSON type error becomes a runtime_error that
// names the message.
template <typename F>
auto guarded(const char* type, F&& f) -> decltype(f()) {
    try {
        return f();
    } catch (const json::exception& e) {
        throw std::runtime_error(std::string("a malformed '") + type + "' message: " + e.what());
    }
}

const char* guardName(Guard g) {
    switch (g) {
    case Guard::Off:
        break;
    case Guard::Check:
        return "check";
    case Guard::Always:
        return "always";
    }
    return "off";
}

Guard guardOf(const std::string& name) {
    if (name == "off")
        return Guard::Off;
    if (name == "check")
        return Guard::Check;
    if (name == "always")
        return Guard::Always;
    throw std::runtime_error("a 'measure' message with an unknown guard '" + name + "'");
}

} // namespace

bool writeFrame(int fd, const Frame& frame) {
    if (frame.header.size() > kMaxPart || frame.blob.size() > kMaxPart)
        return false;
    char lengths[8];
    putU32(lengths, static_cast<std::uint32_t>(frame.header.size()));
    putU32(lengths + 4, static_cast<std::uint32_t>(frame.blob.size()));
    return writeAll(fd, lengths, sizeof lengths) && writeAll(fd, frame.header.data(), frame.header.size()) &&
           writeAll(fd, frame.blob.data(), frame.blob.size());
}

ReadStatus readFrame(int fd, Frame& frame, int timeoutMs) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(0, timeoutMs));
    auto status = [](Part p) {
        switch (p) {
        case Part::Ok:
            return ReadStatus::Ok;
        case Part::Closed:
            return ReadStatus::Closed;
        case Part::Broken:
            return ReadStatus::Broken;
        case Part::TimedOut:
            break;
        }
        return ReadStatus::TimedOut;
    };
    char lengths[8];
    if (const Part p = readAll(fd, lengths, sizeof lengths, timeoutMs, deadline, false); p != Part::Ok)
        return status(p);
    const std::uint32_t headerSize = getU32(lengths);
    const std::uint32_t blobSize = getU32(lengths + 4);
    if (headerSize == 0 || headerSize > kMaxPart || blobSize > kMaxPart)
        return ReadStatus::Broken;
    frame.header.assign(headerSize, '\0');
    frame.blob.assign(blobSize, '\0');
    if (const Part p = readAll(fd, frame.header.data(), headerSize, timeoutMs, deadline, true); p != Part::Ok)
        return status(p);
    if (const Part p = readAll(fd, frame.blob.data(), blobSize, timeoutMs, deadline, true); p != Part::Ok)
        return status(p);
    return ReadStatus::Ok;
}

Frame encode(const Hello& m) {
    return frameOf(json{{"type", "hello"}, {"ok", m.ok}, {"error", m.error}, {"device", deviceJson(m.device)}});
}

Frame encode(const Open& m) {
    return frameOf(json{{"type", "open"},
                        {"problem", m.problemText},
                        {"problem_name", m.problemName},
                        {"base_dir", m.baseDir},
                        {"shape", m.shape},
                        {"seed", m.seed},
                        {"guard", m.guard}});
}

Frame encode(const Opened& m) {
    json buffers = json::array();
    for (const BufferExtent& b : m.buffers)
        buffers.push_back(json{{"argument", b.argument},
                               {"name", b.name},
                               {"address", b.address},
                               {"bytes", b.bytes},
                               {"elements", b.elements},
                               {"guarded", b.guarded}});
    return frameOf(json{{"type", "opened"},
                        {"ok", m.ok},
                        {"error", m.error},
                        {"buffer_bytes", m.bufferBytes},
                        {"buffers", std::move(buffers)},
                        {"note", m.note}});
}

Frame encode(const Measure& m, std::vector<char> cubin) {
    return frameOf(json{{"type", "measure"},
                        {"id", m.id},
                        {"config", m.config},
                        {"kernel", m.kernelName},
                        {"timing", timingJson(m.timing)},
                        {"verify", m.verify},
                        {"make_reference", m.makeReference},
                        {"check_writes", m.checkWrites},
                        {"reference_group", m.referenceGroup},
                        {"metrics", m.metrics},
                        {"guard", guardName(m.guard)},
                        {"return_arguments", m.returnArguments},
                        {"executed_counts", m.executedCounts},
                        {"launch", launchJson(m.launch)}},
                   std::move(cubin));
}

Frame encode(const Result& m) {
    json j{{"type", "result"},
           {"id", m.id},
           {"measurement", measurementJson(m.measurement)},
           {"fatal", m.fatal},
           {"metrics_note", m.metricsNote}};
    if (!m.executedNote.empty())
        j["executed_note"] = m.executedNote;
    if (!m.measurement.executed.empty()) {
        json pairs = json::array();
        for (const InstructionCount& c : m.measurement.executed)
            pairs.push_back(json::array({c.offset, c.executed}));
        j["executed"] = std::move(pairs);
    }
    if (m.function) {
        const FunctionInfo& f = *m.function;
        j["function"] = json{{"registers", f.registers},
                             {"local_bytes", f.localBytes},
                             {"shared_static", f.sharedStatic},
                             {"max_threads_per_block", f.maxThreadsPerBlock},
                             {"blocks_per_sm", f.blocksPerSm},
                             {"grid", {f.grid[0], f.grid[1], f.grid[2]}},
                             {"block", {f.block[0], f.block[1], f.block[2]}},
                             {"shared_dynamic", f.sharedDynamic}};
    }
    if (m.outputs.empty())
        return frameOf(j);
    // The contents travel in the blob, one after another; the header gives each one's argument and size.
    json outputs = json::array();
    std::vector<char> blob;
    for (const ArgumentContents& o : m.outputs) {
        outputs.push_back(json{{"argument", o.argument}, {"bytes", o.bytes.size()}});
        blob.insert(blob.end(), o.bytes.begin(), o.bytes.end());
    }
    j["outputs"] = std::move(outputs);
    return frameOf(j, std::move(blob));
}

Frame encodeShutdown() {
    return frameOf(json{{"type", "shutdown"}});
}

std::string frameType(const Frame& frame) {
    const json header = json::parse(frame.header, nullptr, false);
    if (header.is_discarded() || !header.is_object())
        return {};
    const auto it = header.find("type");
    return it != header.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Hello decodeHello(const Frame& frame) {
    return guarded("hello", [&] {
        const json j = parseHeader(frame, "hello");
        Hello m;
        m.ok = j.at("ok").get<bool>();
        m.error = j.value("error", std::string());
        m.device = deviceOf(j.at("device"));
        return m;
    });
}

Open decodeOpen(const Frame& frame) {
    return guarded("open", [&] {
        const json j = parseHeader(frame, "open");
        Open m;
        m.problemText = j.at("problem").get<std::string>();
        m.problemName = j.value("problem_name", std::string());
        m.baseDir = j.value("base_dir", std::string());
        m.shape = j.at("shape").get<std::uint64_t>();
        m.seed = j.value("seed", std::uint64_t{0});
        m.guard = j.value("guard", false);
        return m;
    });
}

Opened decodeOpened(const Frame& frame) {
    return guarded("opened", [&] {
        const json j = parseHeader(frame, "opened");
        Opened m;
        m.ok = j.at("ok").get<bool>();
        m.error = j.value("error", std::string());
        m.bufferBytes = j.value("buffer_bytes", std::int64_t{0});
        if (const auto buffers = j.find("buffers"); buffers != j.end()) {
            for (const json& b : *buffers) {
                BufferExtent e;
                e.argument = b.at("argument").get<std::size_t>();
                e.name = b.value("name", std::string());
                e.address = b.at("address").get<std::uint64_t>();
                e.bytes = b.at("bytes").get<std::int64_t>();
                e.elements = b.value("elements", std::int64_t{0});
                e.guarded = b.value("guarded", false);
                m.buffers.push_back(std::move(e));
            }
        }
        m.note = j.value("note", std::string());
        return m;
    });
}

Measure decodeMeasure(const Frame& frame) {
    return guarded("measure", [&] {
        const json j = parseHeader(frame, "measure");
        Measure m;
        m.id = j.at("id").get<std::uint64_t>();
        m.config = j.at("config").get<std::vector<std::uint16_t>>();
        m.kernelName = j.at("kernel").get<std::string>();
        m.timing = timingOf(j.at("timing"));
        m.verify = j.value("verify", true);
        m.makeReference = j.value("make_reference", false);
        m.checkWrites = j.value("check_writes", true);
        m.referenceGroup = j.value("reference_group", std::string());
        m.metrics = j.value("metrics", std::vector<std::string>());
        m.guard = guardOf(j.value("guard", std::string("off")));
        m.returnArguments = j.value("return_arguments", std::vector<std::size_t>());
        m.executedCounts = j.value("executed_counts", false);
        if (const auto it = j.find("launch"); it != j.end() && it->is_object())
            m.launch = launchOf(*it);
        return m;
    });
}

Result decodeResult(const Frame& frame) {
    return guarded("result", [&] {
        const json j = parseHeader(frame, "result");
        Result m;
        m.id = j.at("id").get<std::uint64_t>();
        m.measurement = measurementOf(j.at("measurement"));
        m.fatal = j.value("fatal", false);
        m.metricsNote = j.value("metrics_note", std::string());
        m.executedNote = j.value("executed_note", std::string());
        for (const json& pair : j.value("executed", json::array()))
            m.measurement.executed.push_back({pair.at(0).get<std::uint32_t>(), pair.at(1).get<std::uint64_t>()});
        if (j.contains("function")) {
            const json& f = j.at("function");
            FunctionInfo info;
            info.registers = f.at("registers").get<int>();
            info.localBytes = f.at("local_bytes").get<std::int64_t>();
            info.sharedStatic = f.at("shared_static").get<std::int64_t>();
            info.maxThreadsPerBlock = f.at("max_threads_per_block").get<int>();
            info.blocksPerSm = f.at("blocks_per_sm").get<int>();
            for (int i = 0; i < 3; ++i) {
                info.grid[i] = f.at("grid").at(i).get<std::int64_t>();
                info.block[i] = f.at("block").at(i).get<std::int64_t>();
            }
            info.sharedDynamic = f.at("shared_dynamic").get<std::int64_t>();
            m.function = info;
        }
        std::size_t at = 0;
        for (const json& o : j.value("outputs", json::array())) {
            ArgumentContents c;
            c.argument = o.at("argument").get<std::size_t>();
            const auto bytes = o.at("bytes").get<std::size_t>();
            if (bytes > frame.blob.size() - at)
                throw std::runtime_error("the outputs are longer than the blob");
            c.bytes.assign(frame.blob.begin() + static_cast<std::ptrdiff_t>(at),
                           frame.blob.begin() + static_cast<std::ptrdiff_t>(at + bytes));
            at += bytes;
            m.outputs.push_back(std::move(c));
        }
        return m;
    });
}

std::string staticInfoJson(const StaticInfo& info) {
    return staticJson(info).dump();
}

StaticInfo staticInfoOf(std::string_view text) {
    const json j = json::parse(text, nullptr, false);
    if (!j.is_object())
        throw std::runtime_error("static info that is not a JSON object");
    return staticOf(j);
}

std::string provenanceJson(const DeviceInfo& device) {
    return deviceJson(device).dump();
}

} // namespace tilescope::worker
