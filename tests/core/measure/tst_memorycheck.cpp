// Reads and writes past a buffer's end, the parts that need no GPU (measure/cuda/memorycheck.h):
// where a guarded buffer lies in its reservation, the sizes a guarded fault names, which argument
// an address lies in or past, compute-sanitizer's memcheck report read back (in the forms its
// versions print), and where compute-sanitizer is found. The guarded runs themselves are
// tests/gpu/tst_guarded.cpp's.

#include "measure/cuda/memorycheck.h"

#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>

#include <fstream>

using namespace tilescope;

namespace {

constexpr qulonglong kMiB = 1ull << 20;

// A 1-element float input just past a 4 MiB output, and an unnamed 16-element int buffer.
std::vector<worker::BufferExtent> buffers() {
    return {{0, "out", 0x7f0000200000ull, 4 << 20, 1 << 20, false},
            {1, "in", 0x7f0000a00000ull, 4, 1, false},
            {3, "", 0x7f0000c00000ull, 64, 16, false}};
}

// A file that may be run, with `text` in it.
void writeProgram(const QString& path, const char* text = "#!/bin/sh\nexit 0\n") {
    QDir().mkpath(QFileInfo(path).path());
    std::ofstream(path.toStdString()) << text;
    ::chmod(path.toLocal8Bit().constData(), 0755);
}

// Sets environment variables for a test and puts them back after it.
class Environment {
public:
    void set(const char* name, const QByteArray& value) {
        keep(name);
        qputenv(name, value);
    }
    void unset(const char* name) {
        keep(name);
        qunsetenv(name);
    }
    ~Environment() {
        for (const auto& [name, value] : m_saved) {
            if (value)
                qputenv(name.constData(), *value);
            else
                qunsetenv(name.constData());
        }
    }

private:
    void keep(const char* name) {
        for (const auto& saved : m_saved) {
            if (saved.first == name)
                return;
        }
        m_saved.emplace_back(name,
                             qEnvironmentVariableIsSet(name) ? std::optional<QByteArray>(qgetenv(name)) : std::nullopt);
    }
    std::vector<std::pair<QByteArray, std::optional<QByteArray>>> m_saved;
};

} // namespace

class TestMemoryCheck : public QObject {
    Q_OBJECT

private slots:
    void guardedLayouts_data();
    void guardedLayouts();
    void sizes();
    void guardedFault();
    void addresses();
    void reportForms_data();
    void reportForms();
    void reportWithoutError();
    void reportMessage();
    void findsComputeSanitizer();
    void sanitizerCommandLine();
};

void TestMemoryCheck::guardedLayouts_data() {
    QTest::addColumn<qulonglong>("bytes");
    QTest::addColumn<qulonglong>("mapped");
    QTest::addColumn<qulonglong>("offset");
    QTest::addColumn<qulonglong>("slack");
    QTest::addColumn<qulonglong>("guard");
    // One float: it starts 256 bytes before the guard, so elements 1 to 63 are slack.
    QTest::newRow("4 bytes") << 4ull << 2 * kMiB << 2 * kMiB - 256 << 252ull << 2 * kMiB;
    QTest::newRow("none") << 0ull << 2 * kMiB << 2 * kMiB - 256 << 255ull << 2 * kMiB;
    QTest::newRow("a whole granule") << 2 * kMiB << 2 * kMiB << 0ull << 0ull << 2 * kMiB;
    QTest::newRow("two granules and a byte") << 4 * kMiB + 1 << 6 * kMiB << 2 * kMiB - 256 << 255ull << 6 * kMiB;
    QTest::newRow("256-byte multiple") << 3 * kMiB << 4 * kMiB << kMiB << 0ull << 4 * kMiB;
    QTest::newRow("1 GiB: the guard stops growing at 256 MiB")
        << 1024 * kMiB + 4 << 1026 * kMiB << 2 * kMiB - 256 << 252ull << 256 * kMiB;
}

void TestMemoryCheck::guardedLayouts() {
    QFETCH(qulonglong, bytes);
    QFETCH(qulonglong, mapped);
    QFETCH(qulonglong, offset);
    QFETCH(qulonglong, slack);
    QFETCH(qulonglong, guard);
    const GuardedLayout l = guardedLayout(bytes, 2 * kMiB);
    QCOMPARE(qulonglong(l.mapped), mapped);
    QCOMPARE(qulonglong(l.offset), offset);
    QCOMPARE(qulonglong(l.slack), slack);
    QCOMPARE(qulonglong(l.guard), guard);
    QCOMPARE(l.reserved, l.mapped + l.guard);
    // The start is aligned as cuMemAlloc's, and the end meets the guard but for less than that.
    QCOMPARE(l.offset % 256, std::uint64_t(0));
    QCOMPARE(l.offset + std::max<std::uint64_t>(bytes, 1) + l.slack, l.mapped);
    QVERIFY(l.slack < 256);
    QCOMPARE(l.guard % (2 * kMiB), std::uint64_t(0));
    // A smaller granularity (64 KiB) and no alignment beyond a byte: the end is the guard.
    const GuardedLayout tight = guardedLayout(bytes, 64 << 10, 1);
    QCOMPARE(tight.slack, std::uint64_t(0));
    QCOMPARE(tight.offset + std::max<std::uint64_t>(bytes, 1), tight.mapped);
}

void TestMemoryCheck::sizes() {
    QCOMPARE(sizeText(1, 4), std::string("1 element (4 B)"));
    QCOMPARE(sizeText(1 << 20, 4 << 20), std::string("1,048,576 elements (4 MiB)"));
    QCOMPARE(sizeText(3, 1536), std::string("3 elements (1.5 KiB)"));
    QCOMPARE(sizeText(1000, 1023), std::string("1,000 elements (1023 B)"));
    QCOMPARE(sizeText(0, 0), std::string("0 elements (0 B)"));
    QCOMPARE(sizeText(268435456, 3ll << 30), std::string("268,435,456 elements (3 GiB)"));
    QCOMPARE(sizeText(5, 123456789), std::string("5 elements (118 MiB)"));
    QCOMPARE(bufferText(buffers()[1]), std::string("'in' 1 element (4 B)"));
    QCOMPARE(bufferText(buffers()[2]), std::string("argument 3 16 elements (64 B)"));
}

void TestMemoryCheck::guardedFault() {
    const std::string m = guardedFaultMessage(buffers());
    QVERIFY2(m.rfind("illegal memory access in a guarded run: the kernel read or wrote past the end of a buffer; "
                     "arguments: 'out' 1,048,576 elements (4 MiB), 'in' 1 element (4 B), argument 3 16 elements "
                     "(64 B)",
                     0) == 0,
             m.c_str());
    QVERIFY2(m.find("--sanitize") != std::string::npos, m.c_str());
    QVERIFY(guardedFaultMessage({}).find("arguments:") == std::string::npos);
}

void TestMemoryCheck::addresses() {
    const auto b = buffers();
    const std::uint64_t in = 0x7f0000a00000ull;
    // Past the 1-element input: the element it reached, and by how much.
    QCOMPARE(addressText(in + 4, b), std::string("0 bytes past the end of 'in' 1 element (4 B), at its element 1"));
    QCOMPARE(addressText(in + 256, b),
             std::string("252 bytes past the end of 'in' 1 element (4 B), at its element 64"));
    // Inside a buffer: its element.
    QCOMPARE(addressText(0x7f0000200000ull + 48, b),
             std::string("inside 'out' 1,048,576 elements (4 MiB), at its element 12"));
    // Between two buffers, nearer the next one's start: still past the end of the one below
    // (kernels index upwards), unless the report names the allocation.
    QCOMPARE(addressText(0x7f0000bfff00ull, b).rfind("2,096,892 bytes past the end of 'in'", 0), std::size_t(0));
    QCOMPARE(addressText(0x7f0000bfff00ull, b, 0x7f0000c00000ull),
             std::string("256 bytes before the start of argument 3 16 elements (64 B)"));
    // Below every buffer.
    QCOMPARE(addressText(0x7f00001fff00ull, b),
             std::string("256 bytes before the start of 'out' 1,048,576 elements (4 MiB)"));
    // A nearest allocation that is none of the arguments' (the L2 flush buffer) changes nothing.
    QCOMPARE(addressText(in + 8, b, 0x1000ull),
             std::string("4 bytes past the end of 'in' 1 element (4 B), at its element 2"));
    QCOMPARE(addressText(in, {}), std::string());
}

void TestMemoryCheck::reportForms_data() {
    QTest::addColumn<QString>("log");
    QTest::addColumn<QString>("location");
    QTest::addColumn<QString>("function");
    // As compute-sanitizer 2022-2024 prints it: the location after the function and its offset.
    QTest::newRow("one line")
        << "========= COMPUTE-SANITIZER\n"
           "========= Invalid __global__ read of size 4 bytes\n"
           "=========     at overrun+0x90 in /home/user/src/overrun.cu:20\n"
           "=========     by thread (1,0,0) in block (0,0,0)\n"
           "=========     Address 0x7f0000a00004 is out of bounds\n"
           "=========     and is 1 bytes after the nearest allocation at 0x7f0000a00000 of size 4 "
           "bytes\n"
           "=========     Saved host backtrace up to driver entry point at kernel launch time\n"
           "=========         Host Frame: [0x2ea231] in libcuda.so.1\n"
           "=========\n"
           "========= Program hit CUDA_ERROR_LAUNCH_FAILED (error 719) due to \"unspecified "
           "launch failure\" on CUDA API call to cuStreamSynchronize.\n"
           "=========\n"
           "========= ERROR SUMMARY: 2 errors\n"
        << "overrun.cu:20"
        << "overrun";
    // Newer: the location on a line of its own, "Access to", a C++ signature, numbers with commas.
    QTest::newRow("location on its own line")
        << "========= COMPUTE-SANITIZER\n"
           "========= Invalid __global__ read of size 4 bytes\n"
           "=========     at void scale<(int)256>(const float *, float *, int)+0x100\n"
           "=========        in overrun.cu:20\n"
           "=========     by thread (1,0,0) in block (0,0,0)\n"
           "=========     Access to 0x7f0000a00004 is out of bounds\n"
           "=========     and is 1 bytes after the nearest allocation at 0x7f0000a00000 of size 4 bytes\n"
           "=========\n"
           "========= ERROR SUMMARY: 1 error\n"
        << "overrun.cu:20"
        << "void scale<(int)256>(const float *, float *, int)";
    // Before CUDA 12: "at 0xOFFSET in FILE:LINE:FUNCTION".
    QTest::newRow("old form") << "========= CUDA-MEMCHECK\n"
                                 "========= Invalid __global__ read of size 4\n"
                                 "=========     at 0x00000090 in /home/user/overrun.cu:20:overrun\n"
                                 "=========     by thread (1,0,0) in block (0,0,0)\n"
                                 "=========     Address 0x7f0000a00004 is out of bounds\n"
                                 "=========\n"
                              << "overrun.cu:20"
                              << "overrun";
    // Without line information: the function and its offset alone.
    QTest::newRow("no line information") << "========= Invalid __global__ read of size 4 bytes\n"
                                            "=========     at overrun+0x90\n"
                                            "=========     by thread (1,0,0) in block (0,0,0)\n"
                                            "=========     Address 0x7f0000a00004 is out of bounds\n"
                                            "=========     and is 1 bytes after the nearest allocation at "
                                            "0x7f0000a00000 of size 4 bytes\n"
                                         << ""
                                         << "overrun";
}

void TestMemoryCheck::reportForms() {
    QFETCH(QString, log);
    QFETCH(QString, location);
    QFETCH(QString, function);
    const std::optional<SanitizerReport> r = firstSanitizerReport(log.toStdString());
    QVERIFY(r.has_value());
    QVERIFY2(r->headline.rfind("Invalid __global__ read of size 4", 0) == 0, r->headline.c_str());
    QCOMPARE(QString::fromStdString(r->location), location);
    QCOMPARE(QString::fromStdString(r->function), function);
    QCOMPARE(r->thread, std::string("thread (1,0,0) in block (0,0,0)"));
    QCOMPARE(r->address, std::optional<std::uint64_t>(0x7f0000a00004ull));
    QCOMPARE(r->addressProblem, std::string("is out of bounds"));
    if (log.contains("nearest allocation")) {
        QCOMPARE(r->nearest, std::optional<std::uint64_t>(0x7f0000a00000ull));
        QCOMPARE(r->nearestBytes, std::optional<std::uint64_t>(4));
    } else {
        QVERIFY(!r->nearest);
    }
    // The report's own lines stop before the next report.
    QVERIFY(!r->lines.empty());
    for (const std::string& line : r->lines)
        QVERIFY2(line.find("Program hit") == std::string::npos && line.find("ERROR SUMMARY") == std::string::npos,
                 line.c_str());
}

void TestMemoryCheck::reportWithoutError() {
    QVERIFY(!firstSanitizerReport(""));
    QVERIFY(!firstSanitizerReport("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n"));
    // Only an API error: that is the report.
    const auto api = firstSanitizerReport(
        "========= COMPUTE-SANITIZER\n"
        "========= Program hit CUDA_ERROR_INVALID_VALUE (error 1) due to \"invalid argument\" on CUDA API call to "
        "cuMemcpyDtoH.\n"
        "=========\n"
        "========= ERROR SUMMARY: 1 error\n");
    QVERIFY(api.has_value());
    QVERIFY2(api->headline.rfind("Program hit CUDA_ERROR_INVALID_VALUE", 0) == 0, api->headline.c_str());
    // A memory error after an API error is the one reported.
    const auto both = firstSanitizerReport("========= Program hit CUDA_ERROR_NOT_FOUND (error 500) on CUDA API call\n"
                                           "========= Invalid __shared__ write of size 8 bytes\n"
                                           "=========     at k+0x10 in k.cu:3\n"
                                           "=========     Address 0x1000 is misaligned\n");
    QVERIFY(both.has_value());
    QCOMPARE(both->headline, std::string("Invalid __shared__ write of size 8 bytes"));
    QCOMPARE(both->addressProblem, std::string("is misaligned"));
    QCOMPARE(both->location, std::string("k.cu:3"));
}

void TestMemoryCheck::reportMessage() {
    const std::optional<SanitizerReport> r =
        firstSanitizerReport("========= Invalid __global__ read of size 4 bytes\n"
                             "=========     at overrun+0x90 in overrun.cu:20\n"
                             "=========     by thread (64,0,0) in block (0,0,0)\n"
                             "=========     Address 0x7f0000a00100 is out of bounds\n"
                             "=========     and is 253 bytes after the nearest allocation at 0x7f0000a00000 of size "
                             "4 bytes\n");
    QVERIFY(r.has_value());
    const std::string m = sanitizerMessage(*r, buffers());
    QCOMPARE(m,
             std::string("compute-sanitizer (memcheck): Invalid __global__ read of size 4 bytes at overrun.cu:20 in "
                         "overrun by thread (64,0,0) in block (0,0,0); the address is 252 bytes past the end of 'in' "
                         "1 element (4 B), at its element 64"));
    // Without the buffers: the report's own words; without line information: said so.
    SanitizerReport bare = *r;
    bare.location.clear();
    const std::string b = sanitizerMessage(bare, {});
    QVERIFY2(b.find("address 0x7f0000a00100 is out of bounds, near an allocation at 0x7f0000a00000 of 4 bytes") !=
                 std::string::npos,
             b.c_str());
    QVERIFY2(b.find("without line information") != std::string::npos, b.c_str());
}

void TestMemoryCheck::findsComputeSanitizer() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::filesystem::path root = dir.path().toStdString();
    Environment env;
    env.unset("TILESCOPE_COMPUTE_SANITIZER");
    for (const char* name : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"})
        env.unset(name);
    std::string error;

    // Nowhere: what was searched and what to install.
    env.set("PATH", dir.filePath("empty").toUtf8());
    QVERIFY(findComputeSanitizer(&error, {}).empty());
    for (const char* phrase : {"--sanitize needs compute-sanitizer", "PATH", "nvcc", "$CUDA_HOME/bin",
                               "part of the CUDA toolkit", "cuda-sanitizer-13-0", "TILESCOPE_COMPUTE_SANITIZER"})
        QVERIFY2(error.find(phrase) != std::string::npos, (std::string(phrase) + " not in: " + error).c_str());
    QVERIFY(findComputeSanitizer(&error, {root / "toolkit"}).empty());
    QVERIFY2(error.find((root / "toolkit" / "bin").string()) != std::string::npos, error.c_str());

    // In a toolkit folder given as standard: bin/, or the compute-sanitizer folder of the toolkit.
    writeProgram(dir.filePath("toolkit/compute-sanitizer/compute-sanitizer"));
    QCOMPARE(findComputeSanitizer(&error, {root / "toolkit"}), root / "toolkit/compute-sanitizer/compute-sanitizer");
    writeProgram(dir.filePath("toolkit/bin/compute-sanitizer"));
    QCOMPARE(findComputeSanitizer(&error, {root / "toolkit"}), root / "toolkit/bin/compute-sanitizer");

    // $CUDA_HOME.
    writeProgram(dir.filePath("home/bin/compute-sanitizer"));
    env.set("CUDA_HOME", dir.filePath("home").toUtf8());
    QCOMPARE(findComputeSanitizer(&error, {root / "toolkit"}), root / "home/bin/compute-sanitizer");

    // Beside nvcc on PATH, the toolkit's own layout.
    writeProgram(dir.filePath("nvcc-kit/bin/nvcc"));
    writeProgram(dir.filePath("nvcc-kit/compute-sanitizer/compute-sanitizer"));
    env.set("PATH", dir.filePath("nvcc-kit/bin").toUtf8());
    QCOMPARE(findComputeSanitizer(&error, {}), root / "nvcc-kit/compute-sanitizer/compute-sanitizer");

    // On PATH itself, first; a file that may not be run is passed over.
    writeProgram(dir.filePath("path-a/compute-sanitizer"));
    ::chmod(dir.filePath("path-a/compute-sanitizer").toLocal8Bit().constData(), 0644);
    writeProgram(dir.filePath("path-b/compute-sanitizer"));
    env.set("PATH",
            (dir.filePath("path-a") + ":" + dir.filePath("path-b") + ":" + dir.filePath("nvcc-kit/bin")).toUtf8());
    QCOMPARE(findComputeSanitizer(&error, {}), root / "path-b/compute-sanitizer");

    // $TILESCOPE_COMPUTE_SANITIZER wins, and must be a program.
    writeProgram(dir.filePath("chosen/cs"));
    env.set("TILESCOPE_COMPUTE_SANITIZER", dir.filePath("chosen/cs").toUtf8());
    QCOMPARE(findComputeSanitizer(&error, {}), root / "chosen/cs");
    env.set("TILESCOPE_COMPUTE_SANITIZER", dir.filePath("chosen/none").toUtf8());
    QVERIFY(findComputeSanitizer(&error, {}).empty());
    QVERIFY2(error.find("TILESCOPE_COMPUTE_SANITIZER names " + (root / "chosen/none").string()) != std::string::npos,
             error.c_str());
}

void TestMemoryCheck::sanitizerCommandLine() {
    const std::vector<std::string> command = sanitizerCommand("/opt/cs/compute-sanitizer", "/tmp/log.txt");
    QCOMPARE(command.front(), std::string("/opt/cs/compute-sanitizer"));
    auto after = [&](const std::string& option) {
        const auto it = std::find(command.begin(), command.end(), option);
        return it == command.end() || it + 1 == command.end() ? std::string() : *(it + 1);
    };
    QCOMPARE(after("--tool"), std::string("memcheck"));
    QCOMPARE(after("--log-file"), std::string("/tmp/log.txt"));
    QCOMPARE(after("--show-backtrace"), std::string("no"));
    QCOMPARE(after("--report-api-errors"), std::string("no"));
    // A run past one buffer's end lands in padding, not in the next allocation.
    QVERIFY(std::stoull(after("--padding")) >= std::size_t{1} << 20);
}

QTEST_GUILESS_MAIN(TestMemoryCheck)
#include "tst_memorycheck.moc"
