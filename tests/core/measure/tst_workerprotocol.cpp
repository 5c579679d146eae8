// The engine <-> tilescope-worker protocol: every message survives encode -> pipe -> decode,
// numbers JSON cannot hold (NaN, infinities) included; damaged, early-ended and late frames are
// told apart; a frame of the wrong type is refused with a message. The messages between the
// ranks of an MPI job (clusterprotocol.h): a config with its cubins, a slot's backend info.

#include "measure/clusterprotocol.h"
#include "measure/cuda/workerprotocol.h"

#include <QtTest>

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <limits>
#include <thread>

using namespace tilescope;
using namespace tilescope::worker;

namespace {

struct Pipe {
    int read = -1;
    int write = -1;
    Pipe() {
        int fds[2];
        if (::pipe(fds) == 0) {
            read = fds[0];
            write = fds[1];
        }
    }
    ~Pipe() {
        closeWrite();
        if (read >= 0)
            ::close(read);
    }
    void closeWrite() {
        if (write >= 0)
            ::close(write);
        write = -1;
    }
};

// Through a real pipe, with a writer thread (frames may exceed the pipe's buffer).
Frame roundTrip(const Frame& frame) {
    Pipe pipe;
    std::thread writer([&] { QVERIFY(writeFrame(pipe.write, frame)); });
    Frame back;
    const ReadStatus status = readFrame(pipe.read, back, 5000);
    writer.join();
    if (status != ReadStatus::Ok)
        qWarning("readFrame: %d", static_cast<int>(status));
    return back;
}

} // namespace

class TestWorkerProtocol : public QObject {
    Q_OBJECT

private slots:
    void clusterJobCarriesItsCubins() {
        auto sm90 = std::make_shared<CompileResult>();
        sm90->status = CompileStatus::Ok;
        sm90->cubin = {'\x7f', 'E', 'L', 'F', '\0', '\x01', '\xff'};
        sm90->entryName = "_Z5sgemmPKfS0_Pf";
        sm90->info.registers = 128;
        sm90->info.spillStores = 8;
        sm90->info.sharedStatic = 32768;
        sm90->seconds = 0.55;
        sm90->nvrtcVersion = "13.0";
        auto sm80 = std::make_shared<CompileResult>(*sm90);
        sm80->cubin = {'a', 'b'};
        sm80->info.registers = 96;
        sm80->cached = true;
        cluster::SlotJob job;
        job.id = 42;
        job.slot = 3;
        job.item.index = 1234;
        job.item.config = {1, 0, 5};
        job.item.compiles = {{"sm_90", sm90.get()}, {"sm_80", sm80.get()}};
        job.perConfigSeconds = 2.5;
        job.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        job.slowerThanMs = 0.8;
        job.profileUnderMs = 0.6;
        job.keepSamples = true;
        job.samplesPerConfig = 10;

        const cluster::SlotJob back = cluster::decodeJob(cluster::unpack(cluster::pack(cluster::encodeJob(job))));
        QCOMPARE(back.id, job.id);
        QCOMPARE(back.slot, 3);
        QCOMPARE(back.item.index, job.item.index);
        QVERIFY(back.item.config == job.item.config);
        QCOMPARE(back.item.compiles.size(), std::size_t(2));
        QCOMPARE(back.item.compiles[0].arch, std::string("sm_90"));
        QCOMPARE(back.item.compiles[1].arch, std::string("sm_80"));
        // The compiles the item points to are the job's own copies, cubins byte for byte.
        QCOMPARE(back.item.compiles[0].result, back.compiles[0].get());
        QVERIFY(back.compiles[0]->cubin == sm90->cubin);
        QVERIFY(back.compiles[1]->cubin == sm80->cubin);
        QCOMPARE(back.compiles[0]->entryName, sm90->entryName);
        QCOMPARE(back.compiles[0]->info.registers, 128);
        QCOMPARE(back.compiles[0]->info.spillStores, std::int64_t(8));
        QCOMPARE(back.compiles[1]->info.registers, 96);
        QVERIFY(back.compiles[1]->cached);
        QVERIFY(back.compiles[0]->ok());
        QCOMPARE(back.perConfigSeconds, 2.5);
        QCOMPARE(back.slowerThanMs, 0.8);
        QCOMPARE(back.profileUnderMs, 0.6);
        QVERIFY(back.keepSamples);
        QCOMPARE(back.samplesPerConfig, 10);
        QVERIFY(back.deadline);
        const double left = std::chrono::duration<double>(*back.deadline - std::chrono::steady_clock::now()).count();
        QVERIFY(left > 55 && left <= 60);

        // Cubins cut short, and bytes that are no message, are refused.
        worker::Frame cut = cluster::encodeJob(job);
        cut.blob.pop_back();
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, cluster::decodeJob(cut));
        QVERIFY(cluster::unpack({'\x09', 0, 0, 0, '{'}).header.empty());
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, cluster::decodeJob(worker::Frame{"{\"type\":\"measure\"}", {}}));
    }

    void clusterCompileRoundTrips() {
        // A compile handed to a rank: the whole request, the source's bytes as they are (not UTF-8
        // here); its result sent back whole, log and cubin included.
        CompileRequest request;
        request.source = std::string("// caf\xe9\n__global__ void k(float* p) { p[0] = TILE; }\n");
        request.sourceName = "k.cu";
        request.kernelName = "k";
        request.defines = {{"TILE", "4"}, {"kernel_tuner", "1"}};
        request.options = {"-std=c++17"};
        request.arch = "sm_90";
        request.includeDirs = {"/shared/kernels"};
        const cluster::CompileJob job =
            cluster::decodeCompile(cluster::unpack(cluster::pack(cluster::encodeCompile(7, request))));
        QCOMPARE(job.id, std::uint64_t(7));
        QVERIFY(job.request == request);
        worker::Frame cut = cluster::encodeCompile(7, request);
        cut.blob.pop_back();
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, cluster::decodeCompile(cut));

        CompileResult result;
        result.status = CompileStatus::Ok;
        result.cubin = {'\x7f', 'E', 'L', 'F', '\0'};
        result.entryName = "_Z1kPf";
        result.info.registers = 40;
        result.log = std::string("ptxas info: caf\xe9");
        result.seconds = 1.25;
        result.nvrtcVersion = "13.0";
        result.key = std::string(64, 'a');
        const cluster::Compiled back =
            cluster::decodeCompiled(cluster::unpack(cluster::pack(cluster::encodeCompiled(9, result, true))));
        QCOMPARE(back.id, std::uint64_t(9));
        QVERIFY(back.fresh);
        QVERIFY(back.result.ok());
        QVERIFY(back.result.cubin == result.cubin);
        QCOMPARE(back.result.entryName, result.entryName);
        QCOMPARE(back.result.info.registers, 40);
        QCOMPARE(back.result.seconds, 1.25);
        QCOMPARE(back.result.key, result.key);
        QVERIFY(back.result.log.rfind("ptxas info: caf", 0) == 0); // the byte that is not UTF-8 replaced
        QVERIFY(!back.result.cached);
        worker::Frame shortCubin = cluster::encodeCompiled(9, result, true);
        shortCubin.blob.pop_back();
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, cluster::decodeCompiled(shortCubin));
    }

    void clusterBackendInfoRoundTrips() {
        BackendInfo info;
        info.kind = "cuda";
        info.description = "CUDA on NVIDIA H200 (sm_90, device 0)";
        info.deviceName = "NVIDIA H200";
        info.arch = "sm_90";
        info.archs = {"sm_90", "sm_80"};
        info.limits = *findArch("sm_90");
        info.provenanceJson = R"({"devices":[{"name":"NVIDIA H200"}]})";
        info.needsCubins = true;
        info.preferredBatch = 2;
        const BackendInfo back = cluster::backendInfoOf(cluster::backendInfoJson(info));
        QCOMPARE(back.kind, info.kind);
        QCOMPARE(back.description, info.description);
        QCOMPARE(back.deviceName, info.deviceName);
        QVERIFY(back.archs == info.archs);
        QVERIFY(back.limits);
        QCOMPARE(back.limits->sharedPerBlockOptIn, info.limits->sharedPerBlockOptIn);
        QCOMPARE(back.provenanceJson, info.provenanceJson);
        QVERIFY(back.needsCubins);
        QVERIFY(!back.simulated);
        QCOMPARE(back.preferredBatch, std::size_t(2));
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, cluster::backendInfoOf("[1]"));
    }

    void hello();
    void openAndOpened();
    void measureCarriesTheCubin();
    void resultWithEverything();
    void resultKeepsNaNAndInfinity();
    void wrongTypeIsRefused();
    void closedBeforeAFrame();
    void endedMidFrame();
    void timesOut();
    void absurdLengthIsBroken();
    void measurementContexts();
};

void TestWorkerProtocol::hello() {
    Hello m;
    m.ok = true;
    m.device.ordinal = 3;
    m.device.name = "NVIDIA H200";
    m.device.uuid = "GPU-01234567-89ab-cdef-0123-456789abcdef";
    m.device.arch = "sm_90";
    m.device.smCount = 132;
    m.device.l2Bytes = 60 * 1024 * 1024;
    m.device.globalMemoryBytes = 150'000'000'000;
    m.device.smClockKHz = 1'980'000;
    m.device.memoryClockKHz = 3'201'000;
    m.device.driverVersion = 13000;
    m.device.cuptiNote = "counters restricted";
    const Frame f = roundTrip(encode(m));
    QCOMPARE(frameType(f), std::string("hello"));
    const Hello back = decodeHello(f);
    QVERIFY(back.ok);
    QCOMPARE(back.device.ordinal, 3);
    QCOMPARE(back.device.name, m.device.name);
    QCOMPARE(back.device.uuid, m.device.uuid);
    QCOMPARE(back.device.arch, m.device.arch);
    QCOMPARE(back.device.smCount, 132);
    QCOMPARE(back.device.l2Bytes, m.device.l2Bytes);
    QCOMPARE(back.device.globalMemoryBytes, m.device.globalMemoryBytes);
    QCOMPARE(back.device.smClockKHz, m.device.smClockKHz);
    QCOMPARE(back.device.driverVersion, 13000);
    QCOMPARE(back.device.cuptiNote, m.device.cuptiNote);

    Hello no;
    no.error = "no NVIDIA driver: libcuda.so.1: cannot open shared object file";
    const Hello noBack = decodeHello(roundTrip(encode(no)));
    QVERIFY(!noBack.ok);
    QCOMPARE(noBack.error, no.error);
}

void TestWorkerProtocol::openAndOpened() {
    Open m;
    m.problemText = std::string("{\"General\": {\"FormatVersion\": 1}, \"text\": \"quotes \\\" and \\n newlines\"}");
    m.problemName = "sgemm.json";
    m.baseDir = "kernels/sgemm";
    m.shape = 1;
    m.seed = 0xFFFFFFFFFFFFFFFFull;
    const Open back = decodeOpen(roundTrip(encode(m)));
    QCOMPARE(back.problemText, m.problemText);
    QCOMPARE(back.problemName, m.problemName);
    QCOMPARE(back.baseDir, m.baseDir);
    QCOMPARE(back.shape, std::uint64_t{1});
    QCOMPARE(back.seed, m.seed);
    QCOMPARE(back.guard, false);
    m.guard = true;
    QCOMPARE(decodeOpen(roundTrip(encode(m))).guard, true);

    Opened o;
    o.ok = false;
    o.error = "argument 'A': out of device memory";
    o.bufferBytes = 3ll << 30;
    const Opened oBack = decodeOpened(roundTrip(encode(o)));
    QVERIFY(!oBack.ok);
    QCOMPARE(oBack.error, o.error);
    QCOMPARE(oBack.bufferBytes, o.bufferBytes);
    QVERIFY(oBack.buffers.empty());
    QVERIFY(oBack.note.empty());

    // Where the buffers are, for messages that name the one an address is in or next to.
    o.ok = true;
    o.error.clear();
    o.note = "guarded buffers need CUDA's virtual memory management";
    o.buffers = {{0, "out", 0x7f0000200000ull, 4 << 20, 1 << 20, true}, {2, "", 0xFFFFFFFFFFFFFF00ull, 4, 1, false}};
    const Opened withBuffers = decodeOpened(roundTrip(encode(o)));
    QCOMPARE(withBuffers.note, o.note);
    QCOMPARE(withBuffers.buffers.size(), std::size_t(2));
    for (std::size_t i = 0; i < 2; ++i) {
        QCOMPARE(withBuffers.buffers[i].argument, o.buffers[i].argument);
        QCOMPARE(withBuffers.buffers[i].name, o.buffers[i].name);
        QCOMPARE(withBuffers.buffers[i].address, o.buffers[i].address);
        QCOMPARE(withBuffers.buffers[i].bytes, o.buffers[i].bytes);
        QCOMPARE(withBuffers.buffers[i].elements, o.buffers[i].elements);
        QCOMPARE(withBuffers.buffers[i].guarded, o.buffers[i].guarded);
    }
}

void TestWorkerProtocol::measureCarriesTheCubin() {
    Measure m;
    m.id = 12345;
    m.config = {0, 3, 65535, 7};
    m.kernelName = "sgemm";
    m.timing.minSamples = 5;
    m.timing.maxSamples = 77;
    m.timing.targetRelStdev = 0.01;
    m.timing.warmupSeconds = 0.002;
    m.timing.maxSeconds = 0.5;
    m.timing.flushL2 = false;
    m.timing.slowerThanMs = 0.75;
    m.timing.profileUnderMs = 0.5;
    m.timing.l2WriteBytes = 16 << 20;
    m.timing.keepSamples = true;
    m.verify = false;
    m.makeReference = true;
    m.metrics = {"dram__bytes_read.sum", "gpu__time_duration.sum"};
    m.returnArguments = {0, 3};
    m.executedCounts = true;
    // A cubin bigger than a pipe's buffer, with every byte value.
    std::vector<char> cubin(300'000);
    for (std::size_t i = 0; i < cubin.size(); ++i)
        cubin[i] = static_cast<char>(i * 7 + 3);
    const Frame f = roundTrip(encode(m, cubin));
    QCOMPARE(frameType(f), std::string("measure"));
    const Measure back = decodeMeasure(f);
    QCOMPARE(back.id, m.id);
    QCOMPARE(back.returnArguments, (std::vector<std::size_t>{0, 3}));
    QVERIFY(back.executedCounts);
    QVERIFY(!decodeMeasure(roundTrip(encode(Measure{}, {}))).executedCounts);
    QCOMPARE(back.config, m.config);
    QCOMPARE(back.kernelName, m.kernelName);
    QCOMPARE(back.timing.minSamples, 5);
    QCOMPARE(back.timing.maxSamples, 77);
    QCOMPARE(back.timing.targetRelStdev, 0.01);
    QCOMPARE(back.timing.warmupSeconds, 0.002);
    QCOMPARE(back.timing.slowerThanMs, 0.75);
    QCOMPARE(back.timing.profileUnderMs, 0.5);
    QCOMPARE(decodeMeasure(roundTrip(encode(Measure{}, {}))).timing.profileUnderMs, 0.0);
    QCOMPARE(back.timing.maxSeconds, 0.5);
    QCOMPARE(back.timing.flushL2, false);
    QCOMPARE(back.timing.l2WriteBytes, std::int64_t{16 << 20});
    QCOMPARE(back.timing.keepSamples, true);
    QCOMPARE(back.verify, false);
    QCOMPARE(back.makeReference, true);
    QCOMPARE(back.metrics, m.metrics);
    QVERIFY(f.blob == cubin);
    QVERIFY(back.guard == Guard::Off);
    QVERIFY(!back.launch);
    QVERIFY(back.checkWrites);
    QCOMPARE(back.referenceGroup, std::string());

    // A compiler's launch (a Triton kernel's), the write check and the reference group travel.
    LaunchMetadata launch;
    launch.threadsPerBlock = 256;
    launch.sharedBytes = 98304;
    launch.clusterSize = 2;
    launch.scratch = {{128, 8}, {0, 1}};
    launch.argumentTypes = {"*fp16", "i32", "constexpr"};
    m.launch = launch;
    m.checkWrites = false;
    m.referenceGroup = "TSTEPS=4";
    const Measure triton = decodeMeasure(roundTrip(encode(m, {})));
    QVERIFY(triton.launch.has_value());
    QVERIFY(*triton.launch == launch);
    QVERIFY(!triton.checkWrites);
    QCOMPARE(triton.referenceGroup, std::string("TSTEPS=4"));
    m.launch.reset();
    m.checkWrites = true;
    m.referenceGroup.clear();

    // Which launches run on guarded buffers; an engine that does not say means none.
    for (const Guard g : {Guard::Off, Guard::Check, Guard::Always}) {
        m.guard = g;
        QVERIFY(decodeMeasure(roundTrip(encode(m, {}))).guard == g);
    }
    nlohmann::json header = nlohmann::json::parse(encode(m, {}).header);
    header.erase("guard");
    QVERIFY(decodeMeasure(Frame{header.dump(), {}}).guard == Guard::Off);
    header["guard"] = "sometimes";
    try {
        decodeMeasure(Frame{header.dump(), {}});
        QFAIL("an unknown guard was accepted");
    } catch (const std::runtime_error& e) {
        QVERIFY2(std::string(e.what()).find("guard 'sometimes'") != std::string::npos, e.what());
    }
}

void TestWorkerProtocol::resultWithEverything() {
    Result m;
    m.id = 9;
    m.measurement.status = ResultStatus::WrongResult;
    m.measurement.time = TimingStats{1.25, 1.0, 2.5, 0.125, 31};
    m.measurement.metrics = {{"l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", 2.7e8}, {"dram__bytes_read.sum", 0}};
    m.measurement.benchmarkSeconds = 0.0625;
    m.measurement.verificationError = 0.5;
    m.measurement.message = "argument 'C' element 7: 16.5, expected 15";
    m.measurement.device = 2;
    StaticInfo info;
    info.registers = 255;
    info.stackFrame = 1304;
    info.sharedStatic = 8192;
    m.measurement.staticInfo = info;
    m.measurement.deviceState = DeviceState{1755, 3201, 41, 0, 412.5, 0x4};
    m.measurement.samplesMs = {1.25, 1.0, 2.5, 1.125};
    m.measurement.parts = BenchmarkParts{0.004, 0.03, 0.01, 0.02, 0, 1, 2, 1, 1, 3, 1, 25, 42};
    // Executions per instruction: offsets and counts past 32 bits come back exactly.
    m.measurement.executed = {{0x0, 2048}, {0x10, 8192}, {0xfff0, 0x1'0000'0001ull}};
    m.executedNote = "executed instructions not counted: none";
    FunctionInfo function;
    function.registers = 255;
    function.localBytes = 1304;
    function.sharedStatic = 8192;
    function.maxThreadsPerBlock = 256;
    function.blocksPerSm = 1;
    function.grid[0] = 32;
    function.grid[1] = 16;
    function.block[0] = 256;
    function.sharedDynamic = 65536;
    m.function = function;
    m.fatal = true;
    m.metricsNote = "unknown metric 'x'";
    // Two arguments' contents, every byte value, one of them bigger than a pipe's buffer.
    ArgumentContents first{2, std::vector<char>(100'000)};
    for (std::size_t i = 0; i < first.bytes.size(); ++i)
        first.bytes[i] = static_cast<char>(i * 13 + 1);
    m.outputs = {first, ArgumentContents{0, {'a', 'b', 'c'}}, ArgumentContents{5, {}}};

    const Result back = decodeResult(roundTrip(encode(m)));
    QCOMPARE(back.outputs.size(), std::size_t(3));
    QCOMPARE(back.outputs[0].argument, std::size_t(2));
    QVERIFY(back.outputs[0].bytes == first.bytes);
    QCOMPARE(back.outputs[1].argument, std::size_t(0));
    QVERIFY(back.outputs[1].bytes == (std::vector<char>{'a', 'b', 'c'}));
    QVERIFY(back.outputs[2].bytes.empty());
    // A header that claims more than the blob holds is refused.
    Frame cut = encode(m);
    cut.blob.resize(cut.blob.size() - 1);
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, decodeResult(cut));
    QCOMPARE(back.id, std::uint64_t{9});
    QVERIFY(back.measurement == m.measurement);
    QCOMPARE(back.measurement.parts.raced, 1);
    QCOMPARE(back.measurement.parts.profiled, 1);
    QCOMPARE(back.measurement.parts.unrestored, 3);
    QCOMPARE(back.measurement.parts.batched, 1);
    QCOMPARE(back.measurement.parts.batchLaunches, 25);
    QCOMPARE(back.measurement.parts.warmup, 0.01);
    QCOMPARE(back.measurement.parts.samples, 42);
    QVERIFY(back.function.has_value());
    QCOMPARE(back.function->registers, 255);
    QCOMPARE(back.function->localBytes, std::int64_t{1304});
    QCOMPARE(back.function->blocksPerSm, 1);
    QCOMPARE(back.function->grid[0], std::int64_t{32});
    QCOMPARE(back.function->grid[1], std::int64_t{16});
    QCOMPARE(back.function->grid[2], std::int64_t{1});
    QCOMPARE(back.function->block[0], std::int64_t{256});
    QCOMPARE(back.function->sharedDynamic, std::int64_t{65536});
    QVERIFY(back.fatal);
    QCOMPARE(back.metricsNote, m.metricsNote);
    QCOMPARE(back.executedNote, m.executedNote);
    QCOMPARE(back.measurement.executed.size(), std::size_t(3));
    QCOMPARE(back.measurement.executed[2].executed, std::uint64_t(0x1'0000'0001ull));

    Result bare;
    bare.measurement.status = ResultStatus::Crashed;
    const Result bareBack = decodeResult(roundTrip(encode(bare)));
    QVERIFY(!bareBack.function);
    QVERIFY(!bareBack.measurement.staticInfo);
    QVERIFY(!bareBack.measurement.verificationError);
    QVERIFY(!bareBack.measurement.deviceState);
    QVERIFY(bareBack.measurement.samplesMs.empty());
    QVERIFY(bareBack.measurement.executed.empty());
    QVERIFY(bareBack.executedNote.empty());
    QCOMPARE(bareBack.measurement.status, ResultStatus::Crashed);
}

void TestWorkerProtocol::resultKeepsNaNAndInfinity() {
    Result m;
    m.measurement.status = ResultStatus::WrongResult;
    m.measurement.verificationError = std::numeric_limits<double>::infinity();
    m.measurement.time.medianMs = std::numeric_limits<double>::quiet_NaN();
    m.measurement.metrics = {{"x", -std::numeric_limits<double>::infinity()}};
    const Result back = decodeResult(roundTrip(encode(m)));
    QVERIFY(std::isinf(*back.measurement.verificationError) && *back.measurement.verificationError > 0);
    QVERIFY(std::isnan(back.measurement.time.medianMs));
    QVERIFY(std::isinf(back.measurement.metrics.at(0).value) && back.measurement.metrics.at(0).value < 0);
}

void TestWorkerProtocol::wrongTypeIsRefused() {
    const Frame f = encode(Opened{});
    QCOMPARE(frameType(f), std::string("opened"));
    try {
        decodeResult(f);
        QFAIL("a result decoded from an 'opened' frame");
    } catch (const std::runtime_error& e) {
        QVERIFY2(std::string(e.what()).find("'result'") != std::string::npos, e.what());
    }
    Frame junk{"not json", {}};
    QCOMPARE(frameType(junk), std::string());
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, decodeHello(junk));
    // The right type with a field of the wrong type.
    Frame bad{R"({"type": "result", "id": "nine", "measurement": {}})", {}};
    try {
        decodeResult(bad);
        QFAIL("a malformed result decoded");
    } catch (const std::runtime_error& e) {
        QVERIFY2(std::string(e.what()).find("malformed 'result'") != std::string::npos, e.what());
    }
}

void TestWorkerProtocol::closedBeforeAFrame() {
    Pipe pipe;
    pipe.closeWrite();
    Frame f;
    QCOMPARE(readFrame(pipe.read, f, 1000), ReadStatus::Closed);
    QCOMPARE(readFrame(pipe.read, f), ReadStatus::Closed); // no timeout: still returns
}

void TestWorkerProtocol::endedMidFrame() {
    Pipe pipe;
    const Frame whole = encode(Open{"{}", "p.json", "", 0, 1});
    // Only the lengths and half the header, then the writer dies.
    std::string bytes(8, '\0');
    const std::uint32_t size = static_cast<std::uint32_t>(whole.header.size());
    for (int i = 0; i < 4; ++i)
        bytes[static_cast<std::size_t>(i)] = static_cast<char>((size >> (8 * i)) & 0xFF);
    bytes += whole.header.substr(0, whole.header.size() / 2);
    QCOMPARE(::write(pipe.write, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    pipe.closeWrite();
    Frame f;
    QCOMPARE(readFrame(pipe.read, f, 1000), ReadStatus::Broken);
}

void TestWorkerProtocol::timesOut() {
    Pipe pipe;
    Frame f;
    QElapsedTimer timer;
    timer.start();
    QCOMPARE(readFrame(pipe.read, f, 200), ReadStatus::TimedOut);
    QVERIFY(timer.elapsed() >= 150);
    // A frame that begins but does not finish in time is late, not complete.
    const char lengths[8] = {10, 0, 0, 0, 0, 0, 0, 0};
    QCOMPARE(::write(pipe.write, lengths, 8), ssize_t{8});
    QCOMPARE(readFrame(pipe.read, f, 200), ReadStatus::TimedOut);
}

void TestWorkerProtocol::absurdLengthIsBroken() {
    Pipe pipe;
    const unsigned char lengths[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0};
    QCOMPARE(::write(pipe.write, lengths, 8), ssize_t{8});
    Frame f;
    QCOMPARE(readFrame(pipe.read, f, 1000), ReadStatus::Broken);
}

void TestWorkerProtocol::measurementContexts() {
    // --context's words, their names in the provenance, and the errors for what it cannot read.
    TimingRule rule;
    QCOMPARE(setL2Context("warm", rule), std::string());
    QVERIFY(!rule.flushL2);
    QCOMPARE(l2ContextName(rule), std::string("warm"));
    QCOMPARE(setL2Context("pollute:16MiB", rule), std::string());
    QVERIFY(rule.flushL2);
    QCOMPARE(rule.l2WriteBytes, std::int64_t{16} << 20);
    QCOMPARE(l2ContextName(rule), std::string("pollute 16 MiB"));
    QCOMPARE(setL2Context("pollute:1.5g", rule), std::string());
    QCOMPARE(rule.l2WriteBytes, std::int64_t{3} << 29);
    QCOMPARE(setL2Context("pollute:4096", rule), std::string());
    QCOMPARE(rule.l2WriteBytes, std::int64_t{4096});
    QCOMPARE(setL2Context("flush", rule), std::string());
    QVERIFY(rule.flushL2);
    QCOMPARE(rule.l2WriteBytes, std::int64_t{0});
    QCOMPARE(l2ContextName(rule), std::string("flush"));

    const TimingRule before = rule;
    for (const char* bad :
         {"hot", "pollute:", "pollute:lots", "pollute:16XB", "pollute:-1M", "pollute:0", "pollute:1T"}) {
        const std::string why = setL2Context(bad, rule);
        QVERIFY2(!why.empty(), bad);
        QCOMPARE(rule.flushL2, before.flushL2); // an error leaves the rule as it was
        QCOMPARE(rule.l2WriteBytes, before.l2WriteBytes);
    }
    QVERIFY(setL2Context("pollute:16XB", rule).find("unit") != std::string::npos);
}

QTEST_GUILESS_MAIN(TestWorkerProtocol)
#include "tst_workerprotocol.moc"
