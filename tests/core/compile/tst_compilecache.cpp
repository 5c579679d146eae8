// core/compile: the content-addressed compile cache (keys, round trips, corrupt entries read as
// misses, concurrent writers in threads and in processes, the size cap), the compile service
// (pool, cache hits on a second run, results independent of order and thread count) and the
// requests built from a tuning problem.

#include "base/error.h"
#include "base/sha256.h"
#include "compile/compilecache.h"
#include "compile/compileservice.h"
#include "compile/requestbuilder.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <thread>

using namespace tilescope;
namespace fs = std::filesystem;

namespace {

const char* const kBrokenProblem = TILESCOPE_SOURCE_DIR "/kernels/broken/broken.json";
constexpr const char* kWriterFlag = "--cache-writer";

// A result with every field set; `seed` varies the content, `cubinBytes` its size.
CompileResult fakeResult(int seed, std::size_t cubinBytes = 4096) {
    CompileResult r;
    r.status = CompileStatus::Ok;
    r.message = "";
    r.log = "ptxas info    : Used " + std::to_string(seed) + " registers\nline two\n";
    r.cubin.resize(cubinBytes);
    for (std::size_t i = 0; i < cubinBytes; ++i)
        r.cubin[i] = static_cast<char>((i * 31 + static_cast<std::size_t>(seed)) & 0xff);
    r.info.registers = seed;
    r.info.barriers = 1;
    r.info.stackFrame = 16;
    r.info.spillStores = seed * 4;
    r.info.spillLoads = seed * 8;
    r.info.sharedStatic = 4096;
    r.info.constantBytes = 392;
    r.seconds = 0.25 + seed;
    r.nvrtcVersion = "13.0";
    return r;
}

std::string fakeKey(int n) {
    return Sha256::hex(Sha256::hash("key " + std::to_string(n)));
}

bool sameResult(const CompileResult& a, const CompileResult& b) {
    return a.status == b.status && a.message == b.message && a.log == b.log && a.cubin == b.cubin && a.info == b.info &&
           a.seconds == b.seconds && a.nvrtcVersion == b.nvrtcVersion;
}

std::string readAll(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void writeAll(const fs::path& path, const std::string& data) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << data;
}

CompileRequest tinyRequest(const std::string& body, const std::string& arch = "sm_90") {
    CompileRequest request;
    request.source = "extern \"C\" __global__ void k(float* p) { " + body + " }\n";
    request.sourceName = "k.cu";
    request.kernelName = "k";
    request.arch = arch;
    return request;
}

// The body of a writer process: stores keys 0..n-1 (content depends on the key only), reading
// each back after every store, as several tilescope processes sharing a cache do.
int writerMain(const char* dir, int n, int salt) {
    CompileCacheOptions options;
    options.directory = dir;
    CompileCache cache(options);
    int bad = 0;
    for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < n; ++i) {
            const int k = (i * 7 + salt + round) % n;
            cache.store(fakeKey(k), fakeResult(k, 2048 + static_cast<std::size_t>(k) * 64));
            const std::optional<CompileResult> back = cache.load(fakeKey((k + 1) % n));
            if (back && !sameResult(*back, fakeResult((k + 1) % n, 2048 + static_cast<std::size_t>((k + 1) % n) * 64)))
                ++bad;
        }
    }
    return bad == 0 ? 0 : 3;
}

} // namespace

class TestCompileCache : public QObject {
    Q_OBJECT

private slots:
    void sha256_data();
    void sha256();
    void keyCoversTheRequest();
    void keyLeavesOutWhatTheCodeNeverNames();
    void keyFollowsIncludes();
    void cacheRoot();
    void roundTrip();
    void launchRoundTrips();
    void notStored();
    void corruptEntries_data();
    void corruptEntries();
    void concurrentThreads();
    void concurrentProcesses();
    void sizeCap();
    void unwritableCache();
    void serviceSecondRunHits();
    void serviceOrderIndependent();
    void serviceCancel();
    void requestBuilder();
    void requestBuilderRefusesNonSource_data();
    void requestBuilderRefusesNonSource();
};

void TestCompileCache::sha256_data() {
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QString>("digest");
    // FIPS 180-2 examples.
    QTest::newRow("empty") << QByteArray() << "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    QTest::newRow("abc") << QByteArray("abc") << "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    QTest::newRow("448 bits") << QByteArray("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                              << "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1";
    QTest::newRow("a million a") << QByteArray(1000000, 'a')
                                 << "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
}

void TestCompileCache::sha256() {
    QFETCH(QByteArray, input);
    QFETCH(QString, digest);
    QCOMPARE(QString::fromStdString(Sha256::hex(Sha256::hash(input.toStdString()))), digest);
    // Fed in uneven pieces.
    Sha256 sha;
    for (qsizetype at = 0; at < input.size();) {
        const qsizetype piece = std::min<qsizetype>(input.size() - at, 1 + at % 97);
        sha.update(input.constData() + at, static_cast<std::size_t>(piece));
        at += piece;
    }
    QCOMPARE(QString::fromStdString(Sha256::hex(sha.finish())), digest);
}

void TestCompileCache::keyCoversTheRequest() {
    CompileRequest base = tinyRequest("p[0] = A + B;");
    base.defines = {{"A", "1"}, {"B", "2"}};
    base.options = {"-std=c++17"};
    const std::string key = compileCacheKey(base);
    QCOMPARE(key.size(), std::size_t(64));
    QCOMPARE(compileCacheKey(base), key); // deterministic

    std::vector<CompileRequest> changed(8, base);
    changed[0].defines[1].second = "3";
    changed[1].defines = {{"B", "2"}, {"A", "1"}}; // the order of -D can matter (a repeated name)
    changed[2].options.push_back("-lineinfo");
    changed[3].arch = "sm_80";
    changed[4].source += " ";
    changed[5].kernelName = "k2";
    changed[6].sourceName = "other.cu";
    changed[7].defines = {{"A", "12"}}; // no aliasing of concatenated fields: "A"+"12" vs "A1"+"2"...
    changed[7].defines.emplace_back("", "");
    for (std::size_t i = 0; i < changed.size(); ++i)
        QVERIFY2(compileCacheKey(changed[i]) != key, qPrintable(QString::number(i)));

    // Include dirs are not part of the key: only what is found in them is.
    CompileRequest moved = base;
    moved.includeDirs = {"/nonexistent/checkout/kernels"};
    QCOMPARE(compileCacheKey(moved), key);
}

void TestCompileCache::keyLeavesOutWhatTheCodeNeverNames() {
    // grid_size_x of another shape, a launch-only parameter: the kernel never names them, so
    // they cannot change the binary, and the configs share one entry.
    CompileRequest base = tinyRequest("p[0] = TILE;");
    base.defines = {{"grid_size_x", "64"}, {"TILE", "4"}, {"kernel_tuner", "1"}};
    const std::string key = compileCacheKey(base);
    CompileRequest otherGrid = base;
    otherGrid.defines[0].second = "128";
    QCOMPARE(compileCacheKey(otherGrid), key);
    CompileRequest extra = base;
    extra.defines.emplace_back("launch_only", "7");
    QCOMPARE(compileCacheKey(extra), key);
    CompileRequest otherTile = base;
    otherTile.defines[1].second = "8";
    QVERIFY(compileCacheKey(otherTile) != key);

    // A name the kernel mentions in a comment or a guard counts (it may change the code).
    CompileRequest guarded = base;
    guarded.source = "#ifndef kernel_tuner\n#define TILE 2\n#endif\n" + base.source;
    CompileRequest guardedOff = guarded;
    guardedOff.defines.pop_back();
    QVERIFY(compileCacheKey(guarded) != compileCacheKey(guardedOff));

    // The kernel name counts: a template argument may name a define.
    CompileRequest named = base;
    named.kernelName = "k<grid_size_x>";
    CompileRequest namedOther = named;
    namedOther.defines[0].second = "128";
    QVERIFY(compileCacheKey(named) != compileCacheKey(namedOther));

    // A header that names it counts.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    writeAll(fs::path(dir.path().toStdString()) / "grid.h", "#define BLOCKS grid_size_x\n");
    CompileRequest withHeader = base;
    withHeader.source = "#include \"grid.h\"\n" + base.source;
    withHeader.includeDirs = {dir.path().toStdString()};
    CompileRequest withHeaderOther = withHeader;
    withHeaderOther.defines[0].second = "128";
    QVERIFY(compileCacheKey(withHeader) != compileCacheKey(withHeaderOther));

    // Token pasting can build any name: every define counts then.
    CompileRequest pasting = base;
    pasting.source = "#define CAT(a, b) a##b\n" + base.source;
    CompileRequest pastingOther = pasting;
    pastingOther.defines[0].second = "128";
    QVERIFY(compileCacheKey(pasting) != compileCacheKey(pastingOther));
}

void TestCompileCache::keyFollowsIncludes() {
    QTemporaryDir a;
    QTemporaryDir b;
    QVERIFY(a.isValid() && b.isValid());
    for (const QTemporaryDir* dir : {&a, &b}) {
        fs::create_directories(fs::path(dir->path().toStdString()) / "sub");
        writeAll(fs::path(dir->path().toStdString()) / "tile.h", "#include \"sub/inner.h\"\n#define TILE 4\n");
        writeAll(fs::path(dir->path().toStdString()) / "sub" / "inner.h", "#define INNER 1\n");
    }
    CompileRequest request = tinyRequest("p[0] = TILE;");
    request.source = "#include \"tile.h\"\n#include <cuda_fp16.h>\n" + request.source;
    request.includeDirs = {a.path().toStdString()};
    const std::string keyA = compileCacheKey(request);
    request.includeDirs = {b.path().toStdString()};
    QCOMPARE(compileCacheKey(request), keyA); // same contents elsewhere: same key

    // A change two levels down changes the key.
    writeAll(fs::path(b.path().toStdString()) / "sub" / "inner.h", "#define INNER 2\n");
    const std::string keyB = compileCacheKey(request);
    QVERIFY(keyB != keyA);
    // So does the header disappearing.
    fs::remove(fs::path(b.path().toStdString()) / "tile.h");
    QVERIFY(compileCacheKey(request) != keyB);

    // Include dirs given as options are followed too.
    CompileRequest viaOption = tinyRequest("p[0] = TILE;");
    viaOption.source = "#include \"tile.h\"\n" + viaOption.source;
    viaOption.options = {"-I" + a.path().toStdString()};
    const std::string keyOption = compileCacheKey(viaOption);
    writeAll(fs::path(a.path().toStdString()) / "tile.h", "#define TILE 8\n");
    QVERIFY(compileCacheKey(viaOption) != keyOption);
}

void TestCompileCache::cacheRoot() {
    const QByteArray savedDir = qgetenv("TILESCOPE_CACHE_DIR");
    const QByteArray savedXdg = qgetenv("XDG_CACHE_HOME");
    const QByteArray savedHome = qgetenv("HOME");
    const bool hadDir = qEnvironmentVariableIsSet("TILESCOPE_CACHE_DIR");
    const bool hadXdg = qEnvironmentVariableIsSet("XDG_CACHE_HOME");

    qputenv("TILESCOPE_CACHE_DIR", "/tmp/ts-root");
    qputenv("XDG_CACHE_HOME", "/tmp/xdg");
    qputenv("HOME", "/home/someone");
    QCOMPARE(tilescopeCacheRoot(), fs::path("/tmp/ts-root"));
    QCOMPARE(defaultCompileCacheDirectory(), fs::path("/tmp/ts-root/compile"));
    qunsetenv("TILESCOPE_CACHE_DIR");
    QCOMPARE(tilescopeCacheRoot(), fs::path("/tmp/xdg/tilescope"));
    qputenv("XDG_CACHE_HOME", "relative/ignored");
    QCOMPARE(tilescopeCacheRoot(), fs::path("/home/someone/.cache/tilescope"));
    qunsetenv("XDG_CACHE_HOME");
    QCOMPARE(tilescopeCacheRoot(), fs::path("/home/someone/.cache/tilescope"));
    QCOMPARE(CompileCache().directory(), fs::path("/home/someone/.cache/tilescope/compile"));

    hadDir ? qputenv("TILESCOPE_CACHE_DIR", savedDir) : qunsetenv("TILESCOPE_CACHE_DIR");
    hadXdg ? qputenv("XDG_CACHE_HOME", savedXdg) : qunsetenv("XDG_CACHE_HOME");
    qputenv("HOME", savedHome);
}

// A binary whose compiler decides its launch (Triton's) keeps it through the cache: threads,
// shared memory, cluster, scratch buffers, argument types; one without reads back without.
void TestCompileCache::launchRoundTrips() {
    QTemporaryDir dir;
    CompileCache cache({fs::path(dir.path().toStdString()), 1 << 30});
    CompileResult triton = fakeResult(9);
    triton.nvrtcVersion = "Triton 3.6.0";
    LaunchMetadata launch;
    launch.threadsPerBlock = 256;
    launch.sharedBytes = 98304;
    launch.clusterSize = 2;
    launch.scratch = {{512, 128}, {0, 1}};
    launch.argumentTypes = {"*fp16", "*fp16", "i32", "constexpr", "fp32"};
    triton.launch = launch;
    QVERIFY(cache.store(fakeKey(11), triton));
    const std::optional<CompileResult> back = cache.load(fakeKey(11));
    QVERIFY(back && sameResult(*back, triton));
    QVERIFY(back->launch.has_value());
    QVERIFY(*back->launch == launch);
    QVERIFY(cache.store(fakeKey(12), fakeResult(10)));
    const std::optional<CompileResult> plain = cache.load(fakeKey(12));
    QVERIFY(plain && !plain->launch);
    // An entry cut inside its launch section is corrupt, not a binary without a launch.
    const fs::path entry = cache.entryPath(fakeKey(11));
    std::string bytes;
    {
        std::ifstream in(entry, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    std::ofstream(entry, std::ios::binary | std::ios::trunc).write(bytes.data(), std::streamsize(bytes.size() - 40));
    QVERIFY(!cache.load(fakeKey(11)));
    QCOMPARE(cache.stats().corrupt, std::uint64_t(1));
}

void TestCompileCache::roundTrip() {
    QTemporaryDir dir;
    CompileCache cache({fs::path(dir.path().toStdString()), 1 << 30});
    QVERIFY(!fs::exists(cache.directory() / "tmp")); // nothing on disk before the first store

    QVERIFY(!cache.load(fakeKey(1)));
    const CompileResult ok = fakeResult(7);
    QVERIFY(cache.store(fakeKey(1), ok));
    CompileResult error;
    error.status = CompileStatus::CompileError;
    error.message = "k.cu(1): error: expected a \";\"";
    error.log = error.message + "\n1 error detected in the compilation of \"k.cu\".";
    error.nvrtcVersion = "13.0";
    QVERIFY(cache.store(fakeKey(2), error));
    CompileResult noKernel = fakeResult(3);
    noKernel.status = CompileStatus::NoKernel;
    noKernel.info = StaticInfo{};
    QVERIFY(cache.store(fakeKey(3), noKernel));

    const std::optional<CompileResult> a = cache.load(fakeKey(1));
    QVERIFY(a);
    QVERIFY(a->cached);
    QVERIFY(sameResult(*a, ok));
    const std::optional<CompileResult> b = cache.load(fakeKey(2));
    QVERIFY(b && sameResult(*b, error));
    const std::optional<CompileResult> c = cache.load(fakeKey(3));
    QVERIFY(c && sameResult(*c, noKernel));
    QCOMPARE(cache.entryCount(), std::uint64_t(3));
    QCOMPARE(cache.stats().hits, std::uint64_t(3));
    QCOMPARE(cache.stats().misses, std::uint64_t(1));
    QCOMPARE(cache.stats().stores, std::uint64_t(3));
    QVERIFY(fs::is_regular_file(cache.entryPath(fakeKey(1))));

    // Another cache object on the same folder (another process) sees the entries.
    CompileCache other({fs::path(dir.path().toStdString()), 1 << 30});
    QVERIFY(other.load(fakeKey(1)));
    other.clear();
    QCOMPARE(cache.entryCount(), std::uint64_t(0));
    QVERIFY(!cache.load(fakeKey(1)));
}

void TestCompileCache::notStored() {
    QTemporaryDir dir;
    CompileCache cache({fs::path(dir.path().toStdString()), 1 << 30});
    CompileResult transient = fakeResult(1);
    transient.status = CompileStatus::CompileError;
    transient.transient = true;
    QVERIFY(!cache.store(fakeKey(1), transient));
    CompileResult cancelled;
    cancelled.status = CompileStatus::Cancelled;
    QVERIFY(!cache.store(fakeKey(2), cancelled));
    QCOMPARE(cache.entryCount(), std::uint64_t(0));
}

void TestCompileCache::corruptEntries_data() {
    QTest::addColumn<int>("damage");
    QTest::newRow("empty file") << 0;
    QTest::newRow("truncated to half") << 1;
    QTest::newRow("truncated by one byte") << 2;
    QTest::newRow("one byte flipped in the cubin") << 3;
    QTest::newRow("flipped in the checksum") << 4;
    QTest::newRow("trailing garbage") << 5;
    QTest::newRow("not an entry") << 6;
    QTest::newRow("another key's entry") << 7;
    QTest::newRow("a folder in its place") << 8;
}

void TestCompileCache::corruptEntries() {
    QFETCH(int, damage);
    QTemporaryDir dir;
    CompileCache cache({fs::path(dir.path().toStdString()), 1 << 30});
    const CompileResult good = fakeResult(5, 8192);
    QVERIFY(cache.store(fakeKey(1), good));
    QVERIFY(cache.store(fakeKey(2), fakeResult(6)));
    const fs::path path = cache.entryPath(fakeKey(1));
    std::string data = readAll(path);
    switch (damage) {
    case 0:
        data.clear();
        break;
    case 1:
        data.resize(data.size() / 2);
        break;
    case 2:
        data.pop_back();
        break;
    case 3:
        data[data.size() - 32 - 100] ^= 0x40;
        break;
    case 4:
        data.back() ^= 0x01;
        break;
    case 5:
        data += "junk";
        break;
    case 6:
        data = "ptxas info    : Used 32 registers\n";
        break;
    case 7:
        data = readAll(cache.entryPath(fakeKey(2)));
        break;
    default:
        break;
    }
    if (damage == 8) {
        fs::remove(path);
        fs::create_directories(path);
    } else {
        writeAll(path, data);
    }

    QVERIFY(!cache.load(fakeKey(1)));
    QCOMPARE(cache.stats().corrupt, std::uint64_t(damage == 8 ? 0 : 1)); // a folder reads as absent
    QCOMPARE(cache.stats().misses, std::uint64_t(1));
    QVERIFY(cache.load(fakeKey(2))); // the neighbour is fine

    if (damage == 8)
        fs::remove_all(path);
    // A store repairs it.
    QVERIFY(cache.store(fakeKey(1), good));
    const std::optional<CompileResult> back = cache.load(fakeKey(1));
    QVERIFY(back && sameResult(*back, good));
}

void TestCompileCache::concurrentThreads() {
    QTemporaryDir dir;
    CompileCache cache({fs::path(dir.path().toStdString()), 1 << 30});
    constexpr int kKeys = 40;
    std::atomic<int> bad{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&, t] {
            for (int round = 0; round < 3; ++round) {
                for (int i = 0; i < kKeys; ++i) {
                    const int k = (i * 7 + t + round) % kKeys;
                    cache.store(fakeKey(k), fakeResult(k));
                    if (auto back = cache.load(fakeKey((k + 3) % kKeys));
                        back && !sameResult(*back, fakeResult((k + 3) % kKeys)))
                        ++bad;
                }
            }
        });
    }
    for (std::thread& t : threads)
        t.join();
    QCOMPARE(bad.load(), 0);
    QCOMPARE(cache.stats().corrupt, std::uint64_t(0));
    QCOMPARE(cache.stats().storeFailures, std::uint64_t(0));
    QCOMPARE(cache.entryCount(), std::uint64_t(kKeys));
    for (int k = 0; k < kKeys; ++k) {
        const std::optional<CompileResult> back = cache.load(fakeKey(k));
        QVERIFY(back && sameResult(*back, fakeResult(k)));
    }
    QVERIFY(fs::is_empty(cache.directory() / "tmp")); // no temporary file left behind
}

void TestCompileCache::concurrentProcesses() {
    QTemporaryDir dir;
    const QString folder = dir.filePath(QStringLiteral("shared"));
    constexpr int kKeys = 60;
    std::vector<std::unique_ptr<QProcess>> writers;
    for (int w = 0; w < 4; ++w) {
        auto process = std::make_unique<QProcess>();
        process->setProcessChannelMode(QProcess::ForwardedChannels);
        process->start(QCoreApplication::applicationFilePath(),
                       {QString::fromLatin1(kWriterFlag), folder, QString::number(kKeys), QString::number(w * 13)});
        writers.push_back(std::move(process));
    }
    for (auto& process : writers) {
        QVERIFY(process->waitForFinished(120000));
        QCOMPARE(process->exitStatus(), QProcess::NormalExit);
        QCOMPARE(process->exitCode(), 0); // every read during the race saw a whole entry or none
    }
    CompileCache cache({fs::path(folder.toStdString()), 1 << 30});
    QCOMPARE(cache.entryCount(), std::uint64_t(kKeys));
    for (int k = 0; k < kKeys; ++k) {
        const std::optional<CompileResult> back = cache.load(fakeKey(k));
        QVERIFY(back && sameResult(*back, fakeResult(k, 2048 + static_cast<std::size_t>(k) * 64)));
    }
    QCOMPARE(cache.stats().corrupt, std::uint64_t(0));
    QVERIFY(fs::is_empty(cache.directory() / "tmp"));
}

void TestCompileCache::sizeCap() {
    QTemporaryDir dir;
    constexpr std::uint64_t kCap = 1 << 20;
    CompileCache cache({fs::path(dir.path().toStdString()), kCap});
    // Entries of ~100 KB: about ten fit.
    for (int k = 0; k < 8; ++k)
        QVERIFY(cache.store(fakeKey(k), fakeResult(k, 100 * 1024)));
    QVERIFY(cache.load(fakeKey(0))); // used: it becomes the most recent
    for (int k = 8; k < 30; ++k) {
        QVERIFY(cache.store(fakeKey(k), fakeResult(k, 100 * 1024)));
        QVERIFY2(cache.diskUsage() <= kCap, "the cache grew past its cap");
        if (k < 12)
            QVERIFY(cache.load(fakeKey(0)));
    }
    QVERIFY(cache.stats().evicted >= 18);
    QVERIFY(cache.entryCount() >= 7 && cache.entryCount() <= 10);
    QVERIFY(cache.load(fakeKey(29))); // the newest stay
    QVERIFY(cache.load(fakeKey(28)));
    QVERIFY(!cache.load(fakeKey(1))); // the oldest unused went first
    QVERIFY(!cache.load(fakeKey(9)));
    cache.evict();
    QVERIFY(cache.diskUsage() <= kCap);
}

void TestCompileCache::unwritableCache() {
    // A cache folder that cannot be created: compiles go on, nothing is cached.
    QTemporaryDir dir;
    const fs::path file = fs::path(dir.path().toStdString()) / "a-file";
    writeAll(file, "x");
    auto cache = std::make_shared<CompileCache>(CompileCacheOptions{file / "cache", 1 << 30});
    QVERIFY(!cache->store(fakeKey(1), fakeResult(1)));
    QCOMPARE(cache->stats().storeFailures, std::uint64_t(1));
    CompileService service({1, cache});
    const CompileResult result = service.compile(tinyRequest("p[0] = 1.0f;"));
    QVERIFY2(result.ok(), result.message.c_str());
    QVERIFY(!result.cached);
}

void TestCompileCache::serviceSecondRunHits() {
    QTemporaryDir dir;
    auto cache = std::make_shared<CompileCache>(CompileCacheOptions{fs::path(dir.path().toStdString()), 1 << 30});
    const std::vector<CompileRequest> requests = {tinyRequest("p[0] = 1.0f;"), tinyRequest("p[0] = 2.0f;", "sm_80"),
                                                  tinyRequest("p[0] = ;"),
                                                  tinyRequest("p[threadIdx.x] *= 3.0f;", "sm_75")};

    CompileService service({2, cache});
    QCOMPARE(service.threadCount(), 2u);
    const std::vector<CompileResult> first = service.compileAll(requests);
    QCOMPARE(cache->stats().misses, std::uint64_t(4));
    QCOMPARE(cache->stats().stores, std::uint64_t(4)); // the compile error too
    QCOMPARE(first[2].status, CompileStatus::CompileError);

    // Each result names its binary; the service lists the binaries NVRTC compiled, in the order
    // it finished them.
    const std::vector<std::string> compiled = service.compiledKeys();
    QCOMPARE(compiled.size(), std::size_t(4));
    QCOMPARE(service.stats().compiles, std::uint64_t(4));
    QVERIFY(service.stats().places.empty());
    for (std::size_t i = 0; i < requests.size(); ++i) {
        QCOMPARE(first[i].key, compileCacheKey(requests[i]));
        QVERIFY(std::find(compiled.begin(), compiled.end(), first[i].key) != compiled.end());
    }
    QCOMPARE(service.compiledKeys(3).size(), std::size_t(1));
    QVERIFY(service.compiledKeys(4).empty());

    CompileService again({2, cache});
    std::vector<std::pair<std::size_t, std::size_t>> progress;
    const std::vector<CompileResult> second =
        again.compileAll(requests, [&](std::size_t done, std::size_t total) { progress.emplace_back(done, total); });
    QCOMPARE(cache->stats().hits, std::uint64_t(4));
    QVERIFY(!progress.empty());
    QCOMPARE(progress.back(), std::make_pair(std::size_t(4), std::size_t(4)));
    QVERIFY(again.compiledKeys().empty()); // every one a hit
    for (std::size_t i = 0; i < requests.size(); ++i) {
        QVERIFY(!first[i].cached);
        QVERIFY(second[i].cached);
        QCOMPARE(second[i].key, first[i].key);
        QVERIFY(sameResult(first[i], second[i]));
    }
    QVERIFY(second[2].log.find("error") != std::string::npos);
}

void TestCompileCache::serviceOrderIndependent() {
    // One thread in order vs two threads in reverse order (and a submit() of each): the same
    // result for every request.
    std::vector<CompileRequest> requests;
    for (int i = 0; i < 6; ++i)
        requests.push_back(
            tinyRequest("p[threadIdx.x] += " + std::to_string(i) + ".0f * p[0];", i % 2 ? "sm_80" : "sm_90"));
    CompileService one({1, nullptr});
    CompileService two({2, nullptr});
    const std::vector<CompileResult> serial = one.compileAll(requests);
    std::vector<CompileRequest> reversed(requests.rbegin(), requests.rend());
    const std::vector<CompileResult> parallel = two.compileAll(reversed);
    std::vector<std::future<CompileResult>> futures;
    for (const CompileRequest& request : requests)
        futures.push_back(two.submit(request));
    for (std::size_t i = 0; i < requests.size(); ++i) {
        const CompileResult& a = serial[i];
        const CompileResult& b = parallel[requests.size() - 1 - i];
        const CompileResult c = futures[i].get();
        QVERIFY2(a.ok(), a.message.c_str());
        QCOMPARE(a.info, b.info);
        QVERIFY(a.cubin == b.cubin);
        QVERIFY(a.cubin == c.cubin);
        QCOMPARE(a.log, b.log);
    }
}

void TestCompileCache::serviceCancel() {
    std::vector<CompileRequest> requests(20, tinyRequest("p[0] = 1.0f;"));
    std::atomic<bool> cancel{true};
    CompileService service({1, nullptr});
    const std::vector<CompileResult> results = service.compileAll(requests, {}, &cancel);
    QCOMPARE(results.size(), requests.size());
    for (const CompileResult& r : results) {
        QCOMPARE(r.status, CompileStatus::Cancelled);
        QVERIFY(r.transient);
    }
}

void TestCompileCache::requestBuilder() {
    const TuningProblem problem = TuningProblem::load(kBrokenProblem);
    const ConfigSpace space = ConfigSpace::build(problem, 0);
    const RequestBuilder builder(problem);
    const Config config = space.at(5);
    const CompileRequest request = builder.request(config, "sm_80");
    QCOMPARE(request.kernelName, std::string("broken"));
    QCOMPARE(request.sourceName, std::string("broken.cu"));
    QCOMPARE(request.arch, std::string("sm_80"));
    // The problem's options, then line information (every compile has it: the same code).
    QCOMPARE(request.options, (std::vector<std::string>{"-std=c++17", "--generate-line-info"}));
    // Kernel Tuner's order: the grid, the block (LocalSize here: BLOCK threads), the parameters,
    // kernel_tuner.
    const std::int64_t block = space.value(config, 0).i;
    const std::int64_t items = space.value(config, 1).i;
    const std::vector<std::pair<std::string, std::string>> expected = {
        {"grid_size_x", std::to_string(1048576 / (block * items))},
        {"grid_size_y", "1"},
        {"grid_size_z", "1"},
        {"block_size_x", std::to_string(block)},
        {"block_size_y", "1"},
        {"block_size_z", "1"},
        {"BLOCK", std::to_string(block)},
        {"ITEMS", std::to_string(items)},
        {"UNROLL", std::to_string(space.value(config, 2).i)},
        {"kernel_tuner", "1"},
    };
    QCOMPARE(request.defines, expected);
    QCOMPARE(request.includeDirs.size(), std::size_t(1));
    QVERIFY(fs::equivalent(request.includeDirs[0], fs::path(TILESCOPE_SOURCE_DIR "/kernels/broken")));
    QVERIFY(request.source.find("deliberate syntax error") != std::string::npos);

    std::vector<std::unique_ptr<std::string>> strings;
    std::vector<expr::Value> values = expr::parseValueList("[3, 0.5, True, False, 'float4', 1e-05]", strings);
    QCOMPARE(defineValue(values[0]), std::string("3"));
    QCOMPARE(defineValue(values[1]), std::string("0.5"));
    QCOMPARE(defineValue(values[2]), std::string("1"));
    QCOMPARE(defineValue(values[3]), std::string("0"));
    QCOMPARE(defineValue(values[4]), std::string("float4"));
    QCOMPARE(defineValue(values[5]), std::string("1e-05"));

    TuningProblem missing = problem;
    missing.kernelFile = "no-such-kernel.cu";
    QVERIFY_THROWS_EXCEPTION(InputError, RequestBuilder{missing});
}

// A KernelFile that is no CUDA source (a system file, a binary, text in another encoding, a
// file without a kernel) is refused before NVRTC reads it, naming the file and why: its
// contents would otherwise come back in NVRTC's log, which the results keep. What a macro or a
// header may supply is not held against a real kernel.
void TestCompileCache::requestBuilderRefusesNonSource_data() {
    QTest::addColumn<QByteArray>("kernel");  // the kernel file's bytes
    QTest::addColumn<QByteArray>("header");  // "k.h" beside it, where the kernel includes it
    QTest::addColumn<QString>("kernelName"); // KernelName
    QTest::addColumn<QString>("location");   // "" = accepted
    QTest::addColumn<QString>("message");
    const QString file = "/KernelSpecification/KernelFile";
    const QByteArray good = "extern \"C\" __global__ void k(float* p) { p[0] = 1; }\n";
    QTest::newRow("a password file") << QByteArray("root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/:/bin/sh\n")
                                     << QByteArray() << "k" << file
                                     << "has no __global__ function, so it is not CUDA kernel source";
    QTest::newRow("a binary") << QByteArray("\x7f"
                                            "ELF\x02\x01\x01\x00\x00",
                                            9) +
                                     good
                              << QByteArray() << "k" << file << "holds a NUL byte (line 1, column 8): a binary file";
    QTest::newRow("Latin-1 text") << QByteArray("// caf\xe9\n") + good << QByteArray() << "k" << file
                                  << "is not UTF-8 text (the byte 0xE9 at line 1, column 7)";
    QTest::newRow("an overlong UTF-8 form")
        << QByteArray("// \xc0\xaf\n") + good << QByteArray() << "k" << file << "the byte 0xC0 at line 1, column 4";
    QTest::newRow("a cut UTF-8 sequence")
        << good + QByteArray("// \xe2\x9c") << QByteArray() << "k" << file << "the byte 0xE2 at line 2, column 4";
    // A real source without the kernel named is left to NVRTC (NoKernel, which the session's
    // failure watch names).
    QTest::newRow("no kernel of that name") << good << QByteArray() << "gemm" << QString() << QString();
    QTest::newRow("a header that is not text")
        << QByteArray("#include \"k.h\"\n") + good << QByteArray("int x;\n\xff\xfe\n") << "k" << file
        << "line 1 includes \"k.h\", and";
    QTest::newRow("UTF-8 comments") << QByteArray("// caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x9a\x80\n") + good
                                    << QByteArray() << "k" << QString() << QString();
    QTest::newRow("the kernel in a header")
        << QByteArray("#include \"k.h\"\n") << good << "k" << QString() << QString();
    QTest::newRow("a templated, namespaced name")
        << QByteArray("namespace ns { template <int B> __global__ void scale(float* p) { p[0] = B; } }\n")
        << QByteArray() << "ns::scale<block_size_x>" << QString() << QString();
    QTest::newRow("a name a macro pastes")
        << QByteArray("#define KERNEL(T) extern \"C\" __global__ void scale_##T(T* p) { p[0] = 1; }\nKERNEL(float)\n")
        << QByteArray() << "scale_float" << QString() << QString();
}

void TestCompileCache::requestBuilderRefusesNonSource() {
    QFETCH(QByteArray, kernel);
    QFETCH(QByteArray, header);
    QFETCH(QString, kernelName);
    QFETCH(QString, location);
    QFETCH(QString, message);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const fs::path root(dir.path().toStdString());
    writeAll(root / "k.cu", kernel.toStdString());
    if (!header.isEmpty())
        writeAll(root / "k.h", header.toStdString());
    TuningProblem problem = TuningProblem::load(kBrokenProblem);
    problem.kernelFile = (root / "k.cu").string();
    problem.kernelName = kernelName.toStdString();
    std::optional<InputError> error;
    try {
        const RequestBuilder builder(problem);
    } catch (const InputError& e) {
        error = e;
    }
    if (location.isEmpty()) {
        QVERIFY2(!error, error ? error->what() : "");
        return;
    }
    QVERIFY2(error, "accepted");
    QCOMPARE(QString::fromStdString(error->location()), location);
    QCOMPARE(error->file(), problem.fileName);
    QVERIFY2(QString::fromStdString(error->message()).contains(message), error->what());
    QVERIFY2(QString::fromStdString(error->message()).contains("k.cu"), error->what());
    // None of the file's contents is in the message.
    QVERIFY2(!QString::fromStdString(error->message()).contains("root:x"), error->what());
}

int main(int argc, char** argv) {
    // Child mode for concurrentProcesses: this executable is the writer.
    if (argc == 5 && std::string(argv[1]) == kWriterFlag)
        return writerMain(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
    QCoreApplication app(argc, argv);
    TestCompileCache test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}

#include "tst_compilecache.moc"
