// Spills and local memory by source line: nvdisasm's output parsed and counted per line, on a
// pinned fixture (tests/data/sass: spill.cu compiled by NVRTC 13.0 for sm_90 with line information
// and --maxrregcount=32, and what nvdisasm 13.5 -g -c prints for it) against a count made by hand
// of that text, and, where nvdisasm is installed, on the same kernel compiled here.

#include "analysis/sourcelines.h"
#include "base/cudatools.h"
#include "compile/compiler.h"
#include "compile/sass.h"

#include <QtTest>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

using namespace tilescope;

namespace {

const std::string kData = TILESCOPE_SOURCE_DIR "/tests/data/sass/";

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// Bytes one local store or load moves: STL 4, STL.64 8, STL.128 16.
int width(const std::string& opcode) {
    if (opcode.find(".128") != std::string::npos)
        return 16;
    if (opcode.find(".64") != std::string::npos)
        return 8;
    return 4;
}

struct Hand {
    int instructions, spillStores, spillLoads, localStores, localLoads;
};

// Counted by hand from spill.sass: per source line, the instructions under its line mark, the STL
// and LDL marked SpillRefill, and the unmarked ones (the local array `table`).
const std::map<int, Hand> kHandCount = {
    {3, {1, 0, 0, 0, 0}},  {5, {8, 1, 0, 0, 0}},      {8, {180, 30, 1, 0, 0}},  {11, {39, 1, 0, 4, 0}},
    {12, {8, 2, 0, 0, 0}}, {15, {195, 46, 50, 0, 0}}, {17, {50, 17, 29, 0, 1}}, {20, {72, 1, 22, 0, 0}},
    {21, {3, 0, 0, 0, 0}}, {22, {12, 0, 0, 0, 0}},
};

class Environment {
public:
    void set(const char* name, const std::string& value) {
        remember(name);
        ::setenv(name, value.c_str(), 1);
    }
    ~Environment() {
        for (const auto& [name, value] : m_saved) {
            if (value)
                ::setenv(name.c_str(), value->c_str(), 1);
            else
                ::unsetenv(name.c_str());
        }
    }

private:
    void remember(const char* name) {
        if (m_saved.count(name))
            return;
        const char* v = std::getenv(name);
        m_saved[name] = v ? std::optional<std::string>(v) : std::nullopt;
    }
    std::map<std::string, std::optional<std::string>> m_saved;
};

} // namespace

class TestSourceLines : public QObject {
    Q_OBJECT

private slots:
    void fixtureCountsMatchTheHandCount() {
        const std::vector<SassFunction> functions = parseNvdisasm(readFile(kData + "spill.sass"));
        QCOMPARE(functions.size(), std::size_t(1));
        const SassFunction& f = functions.front();
        QCOMPARE(f.name, std::string("spill"));
        QVERIFY(f.hasLineInfo);
        QVERIFY(f.spillsMarked);
        QCOMPARE(f.instructions.size(), std::size_t(568));
        const LineCounts counts = countByLine(f);
        QCOMPARE(counts.lines.size(), kHandCount.size());
        for (const SourceLine& l : counts.lines) {
            QCOMPARE(l.file, std::string("/src/spill.cu"));
            const auto it = kHandCount.find(l.line);
            QVERIFY2(it != kHandCount.end(), qPrintable(QString("line %1").arg(l.line)));
            const Hand& h = it->second;
            QCOMPARE(l.instructions, h.instructions);
            QCOMPARE(l.spillStores, h.spillStores);
            QCOMPARE(l.spillLoads, h.spillLoads);
            QCOMPARE(l.localStores, h.localStores);
            QCOMPARE(l.localLoads, h.localLoads);
            QCOMPARE(int(l.localInstructions.size()), h.spillStores + h.spillLoads + h.localStores + h.localLoads);
        }
        QCOMPARE(counts.spillStores, 98);
        QCOMPARE(counts.spillLoads, 102);
        QCOMPARE(counts.localStores, 4);
        QCOMPARE(counts.localLoads, 1);
        // ptxas' report of the same compile: 392 bytes of spill stores, 408 of spill loads.
        int storeBytes = 0, loadBytes = 0;
        for (const SassInstruction& ins : f.instructions) {
            if (ins.spill && ins.localStore())
                storeBytes += width(ins.opcode);
            if (ins.spill && ins.localLoad())
                loadBytes += width(ins.opcode);
        }
        QCOMPARE(storeBytes, 392);
        QCOMPARE(loadBytes, 408);
        // The annotation and the predicate are not part of the opcode.
        const auto spilled = std::find_if(f.instructions.begin(), f.instructions.end(),
                                          [](const SassInstruction& i) { return i.spill; });
        QVERIFY(spilled != f.instructions.end());
        QVERIFY(spilled->text.find("SpillRefill") == std::string::npos);
        QVERIFY(spilled->text.rfind("STL", 0) == 0 || spilled->text.rfind("LDL", 0) == 0);
    }

    void mostFirstAndDifferences() {
        const LineCounts counts = countByLine(parseNvdisasm(readFile(kData + "spill.sass")).front());
        const std::vector<SourceLine> local = localLines(counts);
        QCOMPARE(local.size(), std::size_t(7)); // lines 5, 8, 11, 12, 15, 17, 20
        QCOMPARE(local[0].line, 15);            // 96 spills
        QCOMPARE(local[1].line, 17);            // 46
        QCOMPARE(local[2].line, 8);             // 31
        // Against itself nothing differs; against a version without line 15's spills, that line.
        QVERIFY(lineDifferences(counts, counts).empty());
        LineCounts fewer = counts;
        for (SourceLine& l : fewer.lines)
            if (l.line == 15)
                l.spillStores = l.spillLoads = 0;
        const std::vector<LineDifference> d = lineDifferences(counts, fewer);
        QCOMPARE(d.size(), std::size_t(1));
        QCOMPARE(d[0].line, 15);
        QCOMPARE(d[0].spillsA, 96);
        QCOMPARE(d[0].spillsB, 0);
    }

    void offsetsAreTheInstructionAddresses() {
        // sm_90 instructions are 16 bytes, one after another from 0: nvdisasm's /*0000*/, /*0010*/, ...
        const SassFunction f = parseNvdisasm(readFile(kData + "spill.sass")).front();
        for (std::size_t i = 0; i < f.instructions.size(); ++i)
            QCOMPARE(f.instructions[i].offset, std::uint32_t(i * 16));
        QCOMPARE(f.instructions[1].text, std::string("S2R R0, SR_CTAID.X"));
    }

    void executedCountsJoinTheLines() {
        const SassFunction f = parseNvdisasm(readFile(kData + "spill.sass")).front();
        // Every instruction ran 2048 times (a warp count): each line's executions are 2048 times its
        // static counts, by the hand count.
        std::vector<InstructionCount> executed;
        for (const SassInstruction& ins : f.instructions)
            executed.push_back({ins.offset, 2048});
        LineCounts counts = countByLine(f);
        QCOMPARE(addExecuted(counts, f, executed), std::size_t(0));
        QVERIFY(counts.hasExecuted);
        for (const SourceLine& l : counts.lines) {
            const Hand& h = kHandCount.at(l.line);
            QCOMPARE(l.executedInstructions, std::uint64_t(2048) * h.instructions);
            QCOMPARE(l.executedSpillStores, std::uint64_t(2048) * h.spillStores);
            QCOMPARE(l.executedSpillLoads, std::uint64_t(2048) * h.spillLoads);
            QCOMPARE(l.executedLocalStores, std::uint64_t(2048) * h.localStores);
            QCOMPARE(l.executedLocalLoads, std::uint64_t(2048) * h.localLoads);
        }
        QCOMPARE(counts.executedSpillStores, std::uint64_t(2048) * 98);
        QCOMPARE(counts.executedInstructions, std::uint64_t(2048) * 568);

        // Offsets that are not an instruction of the function are counted apart, not on a line.
        LineCounts other = countByLine(f);
        QCOMPARE(addExecuted(other, f, {{0x8, 5}, {568 * 16, 7}, {0x10, 3}}), std::size_t(2));
        QCOMPARE(other.executedInstructions, std::uint64_t(3));

        // With a run's counts, the lines most executed come first: line 12's two spill stores ran
        // a million times, line 15's 96 spills not at all.
        LineCounts run = countByLine(f);
        std::vector<InstructionCount> hot;
        for (const SassInstruction& ins : f.instructions)
            if (ins.line == 12 && ins.spill)
                hot.push_back({ins.offset, 1'000'000});
        addExecuted(run, f, hot);
        const std::vector<SourceLine> local = localLines(run);
        QCOMPARE(local.front().line, 12);
        QCOMPARE(local.front().executedSpillStores, std::uint64_t(2'000'000));
        QCOMPARE(localLines(countByLine(f)).front().line, 15); // statically, line 15 first
    }

    void withoutLineInformation() {
        // The same code without line marks: everything under line 0, and the report knows it.
        std::string text = readFile(kData + "spill.sass");
        std::string stripped;
        std::istringstream in(text);
        for (std::string row; std::getline(in, row);)
            if (row.find("//## File") == std::string::npos)
                stripped += row + "\n";
        const LineCounts counts = countByLine(parseNvdisasm(stripped).front());
        QVERIFY(!counts.hasLineInfo);
        QCOMPARE(counts.lines.size(), std::size_t(1));
        QCOMPARE(counts.lines[0].line, 0);
        QCOMPARE(counts.spillStores, 98);
    }

    void missingNvdisasmSaysWhatToInstall() {
        Environment env;
        env.set("TILESCOPE_NVDISASM", "/nonexistent/nvdisasm");
        std::string error;
        QVERIFY(findNvdisasm(&error).empty());
        QVERIFY2(error.find("TILESCOPE_NVDISASM names /nonexistent/nvdisasm") != std::string::npos, error.c_str());
        env.set("TILESCOPE_NVDISASM", "");
        env.set("PATH", "/nonexistent");
        env.set("CUDA_HOME", "/nonexistent");
        const std::filesystem::path found = findNvdisasm(&error);
        if (found.empty()) { // a toolkit in a standard folder may still have one
            for (const char* phrase :
                 {"needs the CUDA toolkit's nvdisasm", "PATH", "nvidia-cuda-nvdisasm", "TILESCOPE_NVDISASM"})
                QVERIFY2(error.find(phrase) != std::string::npos, (std::string(phrase) + " not in: " + error).c_str());
        }
        const Disassembly d = disassemble({'x'}, "/nonexistent/nvdisasm");
        QVERIFY(!d.ok);
        QVERIFY2(d.error.find("cannot start /nonexistent/nvdisasm") != std::string::npos, d.error.c_str());
    }

    // Where nvdisasm is installed: the kernel compiled here by NVRTC with line information,
    // disassembled, counts the same spills as ptxas reports, by line.
    void compiledHereAndDisassembled() {
        std::string why;
        const std::filesystem::path nvdisasm = findNvdisasm(&why);
        if (nvdisasm.empty())
            QSKIP(qPrintable(QString::fromStdString(why)));
        CompileRequest request;
        request.source = readFile(kData + "spill.cu");
        request.sourceName = "spill.cu";
        request.kernelName = "spill";
        request.arch = "sm_90";
        request.options = {kLineInfoOption, "--maxrregcount=32"};
        const CompileResult compiled = compileKernel(request);
        QVERIFY2(compiled.ok(), compiled.log.c_str());
        QVERIFY(compiled.info.spillStores > 0);
        const Disassembly d = disassemble(compiled.cubin, nvdisasm);
        QVERIFY2(d.ok, d.error.c_str());
        const SassFunction* f = findFunction(d, compiled.entryName);
        QVERIFY(f);
        QVERIFY(f->hasLineInfo);
        int storeBytes = 0, loadBytes = 0;
        for (const SassInstruction& ins : f->instructions) {
            QVERIFY2(ins.file.empty() || ins.file.find("spill.cu") != std::string::npos, ins.file.c_str());
            if (ins.spill && ins.localStore())
                storeBytes += width(ins.opcode);
            if (ins.spill && ins.localLoad())
                loadBytes += width(ins.opcode);
        }
        if (f->spillsMarked) {
            QCOMPARE(std::int64_t(storeBytes), compiled.info.spillStores);
            QCOMPARE(std::int64_t(loadBytes), compiled.info.spillLoads);
        }
        const LineCounts counts = countByLine(*f);
        QVERIFY(!localLines(counts).empty());
        // Line information does not change the code: the same registers and spills without it.
        request.options = {"--maxrregcount=32"};
        const CompileResult plain = compileKernel(request);
        QCOMPARE(plain.info.registers, compiled.info.registers);
        QCOMPARE(plain.info.spillStores, compiled.info.spillStores);
    }
};

QTEST_GUILESS_MAIN(TestSourceLines)
#include "tst_sourcelines.moc"
