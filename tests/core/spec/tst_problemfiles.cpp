// collectProblemFiles: the kernel, the headers it includes from the problem's own folders
// (followed, bounded, a cycle once), BinaryRaw data kept up to a limit and by hash beyond it, an
// absolute path by hash only, what cannot be read left out. Real files in a temporary folder.

#include "base/sha256.h"
#include "spec/problemfiles.h"
#include "spec/tuningproblem.h"

#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <map>

using namespace tilescope;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

// A problem in `dir` whose kernel is `kernel`, with BinaryRaw x (DataSource `x`) and a reference
// for y (DataSource `ref`), and these compiler options.
std::string problemJson(const std::string& kernel, const std::string& x, const std::string& ref,
                        const std::string& options = "[]") {
    return R"({
  "General": {"FormatVersion": 1},
  "ConfigurationSpace": {"TuningParameters": [{"Name": "BLOCK", "Type": "int", "Values": "[32, 64]"}]},
  "KernelSpecification": {
    "Language": "CUDA", "KernelName": "scale", "KernelFile": ")" +
           kernel + R"(", "CompilerOptions": )" + options + R"(,
    "GlobalSize": {"X": "4"}, "LocalSize": {"X": "BLOCK"}, "ProblemSize": ["4"],
    "Arguments": [
      {"Name": "x", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadOnly", "Size": "4",
       "FillType": "BinaryRaw", "DataSource": ")" +
           x + R"("},
      {"Name": "y", "Type": "float", "MemoryType": "Vector", "AccessType": "WriteOnly", "Size": "4",
       "FillType": "Constant", "FillValue": 0}
    ],
    "ReferenceArguments": [
      {"Name": "y_ref", "TargetName": "y", "FillType": "BinaryRaw", "DataSource": ")" +
           ref + R"("}
    ]
  }
})";
}

std::map<std::string, ProblemFile> byPath(const std::vector<ProblemFile>& files) {
    std::map<std::string, ProblemFile> out;
    for (const ProblemFile& f : files)
        out[f.path] = f;
    return out;
}

} // namespace

class TestProblemFiles : public QObject {
    Q_OBJECT
private slots:
    void kernelHeadersAndData();
    void dataOverTheLimitAndAbsolutePaths();
    void unreadableFilesAreLeftOut();
};

void TestProblemFiles::kernelHeadersAndData() {
    QTemporaryDir tmp;
    const fs::path root = tmp.path().toStdString();
    const fs::path dir = root / "problem";
    // The kernel includes a header beside it, one of a relative -I folder (which includes one
    // beside itself and, in a cycle, the first), a header up a folder, a toolkit header (not the
    // problem's) and, in a comment's place, one that no folder holds.
    write(dir / "kernels" / "scale.cu", "#include \"common.h\"\n"
                                        "  #  include <tile.h>\n"
                                        "#include <cuda_fp16.h>\n"
                                        "#include \"../shared/up.h\"\n"
                                        "// #include \"nowhere.h\"\n"
                                        "__global__ void scale(float* x, float* y) {}\n");
    write(dir / "kernels" / "common.h", "#pragma once\n#include \"common.h\"\n");
    write(dir / "inc" / "tile.h", "#include \"tile_detail.h\"\n");
    write(dir / "inc" / "tile_detail.h", "#include <tile.h>\n");
    write(dir / "kernels" / "shared" / "unused.h", "");
    write(dir / "kernels" / ".." / "shared" / "up.h", "// up\n");
    write(dir / "data" / "x.bin", std::string(16, 'x'));
    write(dir / "data" / "y.bin", std::string(16, 'y'));
    const TuningProblem problem = TuningProblem::parse(
        problemJson("kernels/scale.cu", "data/x.bin", "data/y.bin", R"(["-Iinc", "-I/usr/include", "-DX=1"])"),
        "p.json", dir);

    const std::vector<ProblemFile> files = collectProblemFiles(problem);
    const std::map<std::string, ProblemFile> found = byPath(files);
    QStringList paths;
    for (const auto& [path, file] : found)
        paths << QString::fromStdString(path);
    QCOMPARE(paths, QStringList({"data/x.bin", "data/y.bin", "inc/tile.h", "inc/tile_detail.h", "kernels/common.h",
                                 "kernels/scale.cu", "shared/up.h"}));
    QCOMPARE(files.front().path, std::string("kernels/scale.cu")); // the kernel first
    QVERIFY(found.at("kernels/scale.cu").role == ProblemFile::Role::Kernel);
    QVERIFY(found.at("inc/tile.h").role == ProblemFile::Role::Header);
    QVERIFY(found.at("shared/up.h").role == ProblemFile::Role::Header);
    QVERIFY(found.at("data/y.bin").role == ProblemFile::Role::Data);
    const ProblemFile& x = found.at("data/x.bin");
    QCOMPARE(x.size, std::uint64_t(16));
    QCOMPARE(x.data, std::optional<std::string>(std::string(16, 'x')));
    QCOMPARE(x.hash, Sha256::hex(Sha256::hash(std::string(16, 'x'))));
    QCOMPARE(found.at("shared/up.h").data, std::optional<std::string>("// up\n"));
}

void TestProblemFiles::dataOverTheLimitAndAbsolutePaths() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    write(dir / "scale.cu", "__global__ void scale(float* x, float* y) {}\n");
    write(dir / "big.bin", std::string(100, 'b'));
    write(dir / "elsewhere" / "ref.bin", std::string(8, 'r'));
    const std::string absolute = (dir / "elsewhere" / "ref.bin").generic_string();
    const TuningProblem problem = TuningProblem::parse(problemJson("scale.cu", "big.bin", absolute), "p.json", dir);
    ProblemFileLimits limits;
    limits.maxDataBytes = 64;
    const std::map<std::string, ProblemFile> found = byPath(collectProblemFiles(problem, limits));
    QCOMPARE(found.size(), std::size_t(3));
    // Over the limit: its hash and size only.
    const ProblemFile& big = found.at("big.bin");
    QVERIFY(!big.data);
    QCOMPARE(big.size, std::uint64_t(100));
    QCOMPARE(big.hash, Sha256::hex(Sha256::hash(std::string(100, 'b'))));
    // Named by an absolute path: its hash only, under that path.
    const ProblemFile& ref = found.at(absolute);
    QVERIFY(!ref.data);
    QCOMPARE(ref.size, std::uint64_t(8));
    // The kernel is kept whatever the data limit.
    QVERIFY(found.at("scale.cu").data);
}

void TestProblemFiles::unreadableFilesAreLeftOut() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    // No kernel, no data: nothing to keep, and no error.
    const TuningProblem problem =
        TuningProblem::parse(problemJson("gone.cu", "gone.bin", "missing/ref.bin"), "p.json", dir);
    QVERIFY(collectProblemFiles(problem).empty());
    // A folder where the data should be is no file.
    fs::create_directories(dir / "gone.bin");
    QVERIFY(collectProblemFiles(problem).empty());
}

QTEST_GUILESS_MAIN(TestProblemFiles)
#include "tst_problemfiles.moc"
