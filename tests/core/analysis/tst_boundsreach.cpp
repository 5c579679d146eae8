// The buffer-edge check through a halo (analysis/boundsreach.h, analysis/launchcheck.h): the
// hotspot stencil of tests/data/cuda/hotspot_halo.cu, indexed as Kernel Tuner's hotspot is (a
// pointer moved into a halo'd input, a shared tile and its halo loaded in loops strided over the
// block, a check on the padded input's width and height), warned about with its inputs sized as
// the grid alone and not with the halo; its reach equal, config by config, to a walk of the
// kernel's load loops; what the check follows in smaller kernels (scoped declarations, else
// branches, x != n, a loop's stride, the launch, #if branches) and what it leaves undecided, and
// the notes that say so, as `tilescope-cli space` prints them.

#include "analysis/boundsreach.h"
#include "analysis/launchcheck.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

using namespace tilescope;
using Json = nlohmann::ordered_json;

namespace {

const std::filesystem::path kCuda = TILESCOPE_TEST_DATA "/cuda";

std::string readText(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// The 1-based line of `file` that holds `part`; 0 when none does.
int lineOf(const std::filesystem::path& file, const std::string& part) {
    std::istringstream source(readText(file));
    std::string line;
    for (int number = 1; std::getline(source, line); ++number) {
        if (line.find(part) != std::string::npos)
            return number;
    }
    return 0;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

std::vector<LaunchWarning> named(const std::vector<LaunchWarning>& warnings, const std::string& name) {
    std::vector<LaunchWarning> out;
    std::copy_if(warnings.begin(), warnings.end(), std::back_inserter(out),
                 [&](const LaunchWarning& w) { return w.name == name; });
    return out;
}

std::int64_t value(const TuningProblem& problem, const Config& config, const std::string& name) {
    const std::size_t p = static_cast<std::size_t>(problem.parameterIndex(name));
    return problem.parameters[p].values[config[p]].i;
}

// hotspot_halo.json for a grid of `side` x `side` cells (its shape and grid_width/height).
TuningProblem hotspotOfSide(const std::string& file, int side) {
    std::ifstream in(kCuda / file);
    Json j = Json::parse(in);
    j["Tilescope"]["Shapes"] = Json::array({{{"W", side}, {"H", side}}});
    for (Json& p : j["ConfigurationSpace"]["TuningParameters"]) {
        if (p["Name"] == "grid_width" || p["Name"] == "grid_height")
            p["Values"] = "[" + std::to_string(side) + "]";
    }
    return TuningProblem::parse(j.dump(), (kCuda / file).string(), kCuda);
}

// The largest element of an input a loop nest of the kernel reads for `config`, by walking it as
// the GPU runs it: every block, every thread, every iteration of the strided loops, each read
// that passes its check. `inset` 0: the loads of the tile and its halo; 1: the first time step,
// which computes a ring less. Rows and columns are checked apart, so the largest is at the
// largest of each.
std::int64_t walkedReach(const TuningProblem& problem, const Config& config, std::int64_t inset = 0) {
    const std::int64_t W = value(problem, config, "grid_width"), H = value(problem, config, "grid_height");
    const std::int64_t bx = value(problem, config, "block_size_x"), by = value(problem, config, "block_size_y");
    const std::int64_t tx = value(problem, config, "tile_size_x"), ty = value(problem, config, "tile_size_y");
    const std::int64_t t = value(problem, config, "temporal_tiling_factor");
    const std::int64_t m = value(problem, config, "max_tfactor");
    const std::int64_t inputWidth = W + 2 * m, inputHeight = H + 2 * m;
    const auto largest = [&](std::int64_t cells, std::int64_t block, std::int64_t tile, std::int64_t halo,
                             std::int64_t limit) {
        const std::int64_t blocks = (cells + block * tile - 1) / (block * tile); // Kernel Tuner's grid
        std::int64_t best = -1;
        for (std::int64_t b = 0; b < blocks; ++b)
            for (std::int64_t thread = 0; thread < block; ++thread)
                for (std::int64_t i = thread + inset; i < block * tile + 2 * halo - inset; i += block) {
                    const std::int64_t c = tile * block * b + i;
                    if (c < limit)
                        best = std::max(best, c);
                }
        return best;
    };
    const std::int64_t x = largest(W, bx, tx, t, inputWidth);
    const std::int64_t y = largest(H, by, ty, t, inputHeight);
    return (m - t) * inputWidth + m - t + y * inputWidth + x;
}

// The values checkLaunch gives the reach for `config`: its -D values and the launch.
std::map<std::string, std::string> valuesOf(const TuningProblem& problem, const Config& config) {
    std::map<std::string, std::string> values;
    for (const TuningParameter& p : problem.parameters)
        values[p.name] = std::to_string(value(problem, config, p.name));
    values["kernel_tuner"] = "1";
    const std::int64_t W = value(problem, config, "grid_width"), H = value(problem, config, "grid_height");
    const std::int64_t bx = value(problem, config, "block_size_x"), by = value(problem, config, "block_size_y");
    const std::int64_t tx = value(problem, config, "tile_size_x"), ty = value(problem, config, "tile_size_y");
    values["blockDim.x"] = std::to_string(bx);
    values["blockDim.y"] = std::to_string(by);
    values["blockDim.z"] = "1";
    values["gridDim.x"] = std::to_string((W + bx * tx - 1) / (bx * tx));
    values["gridDim.y"] = std::to_string((H + by * ty - 1) / (by * ty));
    values["gridDim.z"] = "1";
    return values;
}

} // namespace

class TestBoundsReach : public QObject {
    Q_OBJECT

private slots:
    void hotspotInputsWithoutTheirHalo();
    void hotspotInputsWithTheirHalo();
    void hotspotReachAsWalked();
    void hotspotTilesThatDoNotDivideTheGrid();
    void follows_data();
    void follows();
    void notesSayWhatIsNotDecided();
    void spaceSaysBoth();
};

// Inputs sized as the grid alone: the warning names the buffer, its Size, the line and the
// pointer it is read through, and the other input read past.
void TestBoundsReach::hotspotInputsWithoutTheirHalo() {
    const TuningProblem problem = TuningProblem::load(kCuda / "hotspot_halo_small.json");
    const ConfigSpace space = ConfigSpace::build(problem, 0);
    const std::vector<LaunchWarning> warnings = checkLaunch(problem, 0, space);
    QStringList all;
    for (const LaunchWarning& w : warnings)
        all << QString::fromStdString(w.name + ": " + w.message);
    QVERIFY2(warnings.size() == 1 && warnings[0].name == "buffer-edge", qPrintable(all.join(QLatin1Char('\n'))));
    const LaunchWarning& w = warnings[0];
    QCOMPARE(w.location, std::string("/KernelSpecification/Arguments/0/Size"));
    const std::filesystem::path cu = kCuda / "hotspot_halo.cu";
    const int powerLine = lineOf(cu, "heat[j][i] = power_src[y * input_width + x];");
    const int tempLine = lineOf(cu, "now[j][i] = temp_src[y * input_width + x];");
    QVERIFY(powerLine > 0 && tempLine > 0);
    // 1040 x 1040 cells: the grid and a halo of max_tfactor = 8 on each side, the last one read
    // by the configs with temporal_tiling_factor = max_tfactor.
    for (const std::string& phrase :
         {std::string("argument 'power' holds 1,048,576 elements (Size \"W * H\")"),
          std::string("reach 1,081,600 elements"),
          "at hotspot_halo.cu:" + std::to_string(powerLine) + ", power_src [ y * input_width + x ]",
          std::string("(power_src = power + ( max_tfactor - temporal_tiling_factor ) * input_width + max_tfactor - "
                      "temporal_tiling_factor)"),
          std::string("under j < tile_height && i < tile_width && x < input_width && y < input_height"),
          std::string("for 64 of 64 sampled valid configs"), std::string("temporal_tiling_factor=8"),
          "argument 'temp' too, at hotspot_halo.cu:" + std::to_string(tempLine),
          std::string("\"Silence\": [\"buffer-edge\"]")})
        QVERIFY2(contains(w.message, phrase), (phrase + " not in: " + w.message).c_str());
}

// With the halo, on every config of the space (its tiles divide the grid): not a word, and no
// index left undecided.
void TestBoundsReach::hotspotInputsWithTheirHalo() {
    const TuningProblem problem = TuningProblem::load(kCuda / "hotspot_halo.json");
    const ConfigSpace space = ConfigSpace::build(problem, 0);
    QCOMPARE(space.size(), std::uint64_t(1071));
    QStringList all;
    for (const LaunchWarning& w : checkLaunch(problem, 0, space, space.size()))
        all << QString::fromStdString(w.name + ": " + w.message);
    QVERIFY2(all.isEmpty(), qPrintable(all.join(QLatin1Char('\n'))));
    QStringList notes;
    for (const LaunchWarning& w : bufferEdgeNotes(problem, 0, space, space.size()))
        notes << QString::fromStdString(w.message);
    QVERIFY2(notes.isEmpty(), qPrintable(notes.join(QLatin1Char('\n'))));
}

// The reach of the temperature's load, config by config, is what walking the kernel's loops
// finds: for tiles that divide the grid and for tiles that do not.
void TestBoundsReach::hotspotReachAsWalked() {
    const std::string source = readText(kCuda / "hotspot_halo.cu");
    const KernelReach reach(source, "calculate_temp");
    QCOMPARE(reach.argumentNames().size(), std::size_t(7));
    const auto load = std::find_if(reach.indexes().begin(), reach.indexes().end(), [](const BoundedIndex& i) {
        return i.access == "temp_src [ y * input_width + x ]";
    });
    QVERIFY(load != reach.indexes().end());
    QCOMPARE(load->argument, std::size_t(1)); // temp
    QCOMPARE(load->through, std::string("temp_src = temp + ( max_tfactor - temporal_tiling_factor ) * input_width + "
                                        "max_tfactor - temporal_tiling_factor"));
    int compared = 0;
    for (const int side : {1024, 1000}) {
        const TuningProblem problem = hotspotOfSide("hotspot_halo.json", side);
        const ConfigSpace space = ConfigSpace::build(problem, 0);
        for (const std::uint64_t index : space.sample(std::min<std::uint64_t>(40, space.size()), 7)) {
            const Config config = space.at(index);
            const IndexReach r = reach.reach(*load, valuesOf(problem, config));
            QVERIFY2(r.largest.has_value(), r.unknown.c_str());
            QVERIFY2(*r.largest == walkedReach(problem, config),
                     (space.describe(config) + ": " + std::to_string(*r.largest) +
                      " != " + std::to_string(walkedReach(problem, config)))
                         .c_str());
            ++compared;
        }
    }
    QCOMPARE(compared, 80);
    // Without the launch, threadIdx and blockIdx bound nothing, and the checks alone decide.
    const TuningProblem problem = TuningProblem::load(kCuda / "hotspot_halo.json");
    const Config first = ConfigSpace::build(problem, 0).at(0);
    std::map<std::string, std::string> values = valuesOf(problem, first);
    for (const char* launch : {"blockDim.x", "blockDim.y", "gridDim.x", "gridDim.y"})
        values.erase(launch);
    const std::int64_t skip = 8 - value(problem, first, "temporal_tiling_factor");
    QCOMPARE(reach.largest(*load, values), std::optional<std::int64_t>(skip * 1040 + skip + 1040 * 1040 - 1));
}

// Where a tile does not divide the grid, the last blocks' halo reads run past even the right
// size, by up to max_tfactor - temporal_tiling_factor rows: the kernel checks the moved
// pointer's coordinates against the whole input's width and height. The warning counts the
// sampled configs the walk finds past the end.
void TestBoundsReach::hotspotTilesThatDoNotDivideTheGrid() {
    const TuningProblem problem = hotspotOfSide("hotspot_halo.json", 1000);
    const ConfigSpace space = ConfigSpace::build(problem, 0);
    const std::int64_t elements = 1016 * 1016;
    std::size_t past = 0, sampled = 0;
    for (const std::uint64_t index : space.sample(std::min<std::uint64_t>(64, space.size()), 0)) {
        // The warning names power: loaded with the tile under sh_power = 1, read in the time
        // steps otherwise.
        const Config config = space.at(index);
        const bool staged = value(problem, config, "sh_power") == 1;
        past += walkedReach(problem, config, staged ? 0 : 1) >= elements ? 1 : 0;
        ++sampled;
    }
    QVERIFY(past > 0 && past < sampled);
    const std::vector<LaunchWarning> edges = named(checkLaunch(problem, 0, space), "buffer-edge");
    QCOMPARE(edges.size(), std::size_t(1));
    for (const std::string& phrase :
         {std::string("holds 1,032,256 elements (Size \"(W + 2 * max(max_tfactor)) * (H + 2 * max(max_tfactor))\")"),
          "for " + std::to_string(past) + " of " + std::to_string(sampled) + " sampled valid configs"})
        QVERIFY2(contains(edges[0].message, phrase), (phrase + " not in: " + edges[0].message).c_str());
}

void TestBoundsReach::follows_data() {
    QTest::addColumn<QString>("kernel");
    QTest::addColumn<QString>("values");    // name=value, space-separated
    QTest::addColumn<QString>("access");    // the index checked, as BoundedIndex::access spells it
    QTest::addColumn<qlonglong>("largest"); // -1: not decided; -2: no such index
    QTest::addColumn<QString>("unknown");   // when not decided: part of the reason

    const QString launch = QStringLiteral("blockDim.x=128 gridDim.x=8 ");
    QTest::newRow("a name declared in two blocks, each its own")
        << "__global__ void k(float* a, float* b, int n) {\n"
           "  for (int i = 0; i < 4; i++) { int x = i * 2; a[x] = 0; }\n"
           "  for (int i = 0; i < 4; i++) { int x = i * 3; b[x] = 0; }\n}"
        << "n=0"
        << "b [ x ]" << 9LL << "";
    QTest::newRow("a pointer set from a pointer set from an argument")
        << "__global__ void k(float* in, int w) {\n"
           "  int y = blockIdx.x;\n  float* row = in + y * w;\n  const float* cell = &row[2];\n"
           "  if (threadIdx.x < w - 2) in[0] = cell[threadIdx.x];\n}"
        << launch + "w=100"
        << "cell [ threadIdx . x ]" << 799LL << "";
    QTest::newRow("else: the check's negation") << "__global__ void k(float* in, int n) {\n"
                                                   "  int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                                   "  if (x >= n) { in[0] = 0; } else { in[x] = 1; }\n}"
                                                << launch + "n=1000"
                                                << "in [ x ]" << 999LL << "";
    QTest::newRow("?: without parentheses, both branches") << "__global__ void k(float* in, float* out, int n) {\n"
                                                              "  int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                                              "  out[0] = x >= n ? 0.0f : in[x];\n}"
                                                           << launch + "n=1000"
                                                           << "in [ x ]" << 999LL << "";
    QTest::newRow("x != n - 1 takes the last off")
        << "__global__ void k(float* in, int n) {\n"
           "  int x = threadIdx.x;\n  if (x >= n) return;\n"
           "  if (x == 0 || x == n - 1) { in[x] = 0; } else { in[x + 1] = in[x - 1]; }\n}"
        << launch + "n=100"
        << "in [ x + 1 ]" << 99LL << "";
    QTest::newRow("a loop's stride keeps it a multiple")
        << "__global__ void k(float* in, int K) {\n"
           "  const int warp = threadIdx.x / 32;\n"
           "  for (int k0 = warp * 256; k0 < K; k0 += 4 * 256)\n"
           "    for (int u = 0; u < 8; ++u) in[k0 + u * 32 + 31] = 0;\n}"
        << launch + "K=4096"
        << "in [ k0 + u * 32 + 31 ]" << 4095LL << "";
    QTest::newRow("the launch alone") << "__global__ void k(float* out) {\n"
                                         "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  out[i] = 0;\n}"
                                      << launch << "out [ i ]" << 1023LL << "";
    QTest::newRow("casts and min")
        << "__global__ void k(float* out, int n) {\n"
           "  long long i = static_cast<long long>(blockIdx.x) * blockDim.x + (int)threadIdx.x;\n"
           "  out[min(i, (long long)n - 1)] = 0;\n}"
        << launch + "n=500"
        << "out [ min ( i , ( long long ) n - 1 ) ]" << 499LL << "";
    QTest::newRow("?: branches under their side of the check")
        << "__global__ void k(float* out, int n) {\n"
           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  int last = i < n ? i : n - 1;\n"
           "  out[last] = 0;\n}"
        << launch + "n=500"
        << "out [ last ]" << 499LL << "";
    QTest::newRow("a pointer compared is not read")
        << "__global__ void k(float* out, const float* in, int n) {\n"
           "  float s = 0.0f;\n"
           "  for (const float* p = in + threadIdx.x; p < in + n; p += blockDim.x) s += *p;\n"
           "  out[threadIdx.x] = s;\n}"
        << launch + "n=100"
        << "in + n" << -2LL << "";
    QTest::newRow("an #if these values compile")
        << "#define OFF 4\n__global__ void k(float* out) {\n  int i = threadIdx.x;\n"
           "#if MODE == 1\n  out[i + OFF] = 0;\n#endif\n}"
        << launch + "MODE=1"
        << "out [ i + OFF ]" << 131LL << "";
    QTest::newRow("an #if these values leave out")
        << "__global__ void k(float* out) {\n  int i = threadIdx.x;\n#if MODE == 1\n  out[i + 4] = 0;\n#endif\n}"
        << launch + "MODE=0"
        << "out [ i + 4 ]" << -1LL << "not compiled";
    const QString chain = QStringLiteral("__global__ void k(float* out) {\n  int i = threadIdx.x;\n#if MODE == 1\n"
                                         "  out[i + 4] = 0;\n#elif MODE == 2\n  out[i + 8] = 0;\n#else\n"
                                         "  out[i + 16] = 0;\n#endif\n}");
    QTest::newRow("an #elif these values compile") << chain << launch + "MODE=2"
                                                   << "out [ i + 8 ]" << 135LL << "";
    QTest::newRow("an #elif after the branch taken") << chain << launch + "MODE=1"
                                                     << "out [ i + 8 ]" << -1LL << "not compiled";
    QTest::newRow("an #else after the branch taken") << chain << launch + "MODE=2"
                                                     << "out [ i + 16 ]" << -1LL << "not compiled";
    QTest::newRow("an #else these values compile") << chain << launch + "MODE=3"
                                                   << "out [ i + 16 ]" << 143LL << "";
    // A code generator's source (Kernel Tuner's, written out by `kt`): one #elif per config, each
    // line under the negations of all the branches before it.
    QString generated = QStringLiteral("__global__ void k(float* out) {\n  int i = threadIdx.x;\n#if MODE == 0\n"
                                       "  out[i] = 0;\n");
    for (int m = 1; m < 4000; ++m)
        generated += QStringLiteral("#elif MODE == %1 && (VARIANT == 1 || VARIANT == 2 || VARIANT == 3)\n"
                                    "  out[i + %1] = 0;\n")
                         .arg(m);
    generated += QStringLiteral("#endif\n}");
    QTest::newRow("4,000 #elif branches, the last taken") << generated << launch + "MODE=3999 VARIANT=2"
                                                          << "out [ i + 3999 ]" << 4126LL << "";
    QTest::newRow("4,000 #elif branches, one before the last") << generated << launch + "MODE=3999 VARIANT=2"
                                                               << "out [ i + 3998 ]" << -1LL << "not compiled";
    QTest::newRow("a check it cannot read")
        << "__global__ void k(float* out) {\n"
           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if ((i & 1) == 0) out[i / 2] = 0;\n}"
        << launch << "out [ i / 2 ]" << -1LL << "whose check ( i & 1 ) == 0 it does not read";
    QTest::newRow("a check through a bool")
        << "__global__ void k(float* out, int n) {\n"
           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  const bool inside = i < n;\n"
           "  out[0] = inside ? out[i] : 0.0f;\n}"
        << launch + "n=10"
        << "out [ i ]" << -1LL << "whose check inside it does not read";
    QTest::newRow("a call") << "__device__ int clampi(int v, int hi) { return v < hi ? v : hi; }\n"
                               "__global__ void k(float* in, int n) {\n  in[clampi(threadIdx.x, n - 1)] = 0;\n}"
                            << launch + "n=10"
                            << "in [ clampi ( threadIdx . x , n - 1 ) ]" << -1LL << "a call it does not follow";
    QTest::newRow("a value read from memory")
        << "__global__ void k(float* in, const int* idx) {\n  in[idx[threadIdx.x]] = 0;\n}" << launch
        << "in [ idx [ threadIdx . x ] ]" << -1LL << "a value read from memory: idx [ threadIdx . x ]";
    QTest::newRow("a name the kernel changes")
        << "__global__ void k(float* in) {\n  int i = threadIdx.x;\n  i += 5;\n  in[i] = 0;\n}" << launch << "in [ i ]"
        << -1LL << "i, which the kernel changes";
    QTest::newRow("without the launch") << "__global__ void k(float* out) {\n  out[threadIdx.x] = 0;\n}"
                                        << ""
                                        << "out [ threadIdx . x ]" << -1LL << "blockDim.x, not given";
}

void TestBoundsReach::follows() {
    QFETCH(QString, kernel);
    QFETCH(QString, values);
    QFETCH(QString, access);
    QFETCH(qlonglong, largest);
    QFETCH(QString, unknown);
    const KernelReach reach(kernel.toStdString(), "k");
    std::map<std::string, std::string> given;
    for (const QString& pair : values.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        const QStringList parts = pair.split(QLatin1Char('='));
        given[parts[0].toStdString()] = parts[1].toStdString();
    }
    QStringList accesses;
    const BoundedIndex* index = nullptr;
    for (const BoundedIndex& i : reach.indexes()) {
        accesses << QString::fromStdString(i.access);
        if (i.access == access.toStdString())
            index = &i;
    }
    if (largest == -2) {
        QVERIFY2(!index, qPrintable(accesses.join(QStringLiteral(" | "))));
        return;
    }
    QVERIFY2(index, qPrintable(accesses.join(QStringLiteral(" | "))));
    const IndexReach r = reach.reach(*index, given);
    if (largest >= 0) {
        QVERIFY2(r.largest.has_value(), r.unknown.c_str());
        QCOMPARE(static_cast<qlonglong>(*r.largest), largest);
    } else {
        QVERIFY2(!r.largest.has_value(), std::to_string(r.largest.value_or(0)).c_str());
        QVERIFY2(contains(r.unknown, unknown.toStdString()), r.unknown.c_str());
        QCOMPARE(r.compiled, unknown != QLatin1String("not compiled"));
    }
}

// A buffer none of whose indexes the check follows gets a note that says so, with the line and
// why; the warnings stay silent about it, and a silenced buffer-edge silences the notes too.
void TestBoundsReach::notesSayWhatIsNotDecided() {
    const std::filesystem::path corpus = TILESCOPE_TEST_DATA "/t1corpus";
    const TuningProblem problem = TuningProblem::load(corpus / "hotspot.json");
    const ConfigSpace space = ConfigSpace::build(problem, 0);
    QVERIFY(named(checkLaunch(problem, 0, space), "buffer-edge").empty());
    const std::vector<LaunchWarning> notes = bufferEdgeNotes(problem, 0, space);
    QCOMPARE(notes.size(), std::size_t(1));
    QCOMPARE(notes[0].name, std::string("buffer-edge"));
    QCOMPARE(notes[0].location, std::string("/KernelSpecification/Arguments/1/Size"));
    const int line = lineOf(corpus / "hotspot.cu", "sh_temp[i][j] = temp_src[y * grid_cols + x];");
    for (const std::string& phrase :
         {std::string("could not decide how far the kernel indexes argument 'temp_src'"),
          "hotspot.cu:" + std::to_string(line) + ", temp_src [ y * grid_cols + x ]",
          std::string("a call it does not follow: clamp_index ( y0 + i - 1 , grid_rows - 1 )")})
        QVERIFY2(contains(notes[0].message, phrase), (phrase + " not in: " + notes[0].message).c_str());

    TuningProblem silenced = problem;
    silenced.silencedWarnings = {"buffer-edge"};
    QVERIFY(bufferEdgeNotes(silenced, 0, space).empty());
}

// `tilescope-cli space`: the warning for inputs without their halo, nothing for inputs with it,
// and at a glance (not with --count) the note for a buffer it could not decide.
void TestBoundsReach::spaceSaysBoth() {
    const auto space = [](const std::filesystem::path& problem, const QStringList& options) {
        QProcess cli;
        cli.start(QStringLiteral(TILESCOPE_CLI),
                  QStringList{QStringLiteral("space"), QString::fromStdString(problem.string())} + options);
        if (!cli.waitForFinished(120000) || cli.exitCode() != 0)
            return QStringLiteral("failed: ") + QString::fromUtf8(cli.readAllStandardError());
        return QString::fromUtf8(cli.readAllStandardError());
    };
    const QString small = space(kCuda / "hotspot_halo_small.json", {QStringLiteral("--count")});
    QVERIFY2(small.startsWith(QStringLiteral("warning: ")) &&
                 small.contains(QStringLiteral("/KernelSpecification/Arguments/0/Size: argument 'power' holds")) &&
                 small.contains(QStringLiteral("hotspot_halo.cu:")),
             qPrintable(small));
    const QString right = space(kCuda / "hotspot_halo.json", {QStringLiteral("--sample"), QStringLiteral("1")});
    QVERIFY2(right.isEmpty(), qPrintable(right));

    const std::filesystem::path clamped = TILESCOPE_TEST_DATA "/t1corpus/hotspot.json";
    const QString glance = space(clamped, {QStringLiteral("--sample"), QStringLiteral("1")});
    QVERIFY2(glance.startsWith(QStringLiteral("note: ")) &&
                 glance.contains(QStringLiteral(
                     "/KernelSpecification/Arguments/1/Size: buffer-edge could not decide how far the kernel indexes "
                     "argument 'temp_src'")) &&
                 !glance.contains(QStringLiteral("warning")),
             qPrintable(glance));
    const QString count = space(clamped, {QStringLiteral("--count")});
    QVERIFY2(count.isEmpty(), qPrintable(count));
}

QTEST_GUILESS_MAIN(TestBoundsReach)
#include "tst_boundsreach.moc"
