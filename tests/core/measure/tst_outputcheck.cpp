// Which elements of an output a launch wrote, on outputs recorded as the worker downloads them:
// canaried WriteOnly buffers, ReadWrite buffers judged by their initial contents, elements the
// reference writes and a config does not, NaN and Inf, and the messages people read.

#include "measure/cuda/argumentdata.h"
#include "measure/cuda/outputcheck.h"

#include <QtTest>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace tilescope;

namespace {

ArgumentSpec output(ElementType type, std::int64_t count, const char* name = "out") {
    ArgumentSpec a;
    a.name = name;
    a.typeName = std::string(elementTypeName(type));
    a.element = type;
    a.count = count;
    a.access = Access::WriteOnly;
    a.verify = true;
    return a;
}

template <typename T>
std::vector<unsigned char> bytesOf(const std::vector<T>& values) {
    std::vector<unsigned char> out(values.size() * sizeof(T));
    std::memcpy(out.data(), values.data(), out.size());
    return out;
}

// `n` floats i + 1, with every element in `unwritten` left as the canary's bytes.
std::vector<unsigned char> canaried(std::int64_t n, const std::vector<std::int64_t>& unwritten,
                                    unsigned char canary = kCanary) {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i)
        v[static_cast<std::size_t>(i)] = static_cast<float>(i + 1);
    std::vector<unsigned char> bytes = bytesOf(v);
    for (const std::int64_t i : unwritten)
        std::memset(bytes.data() + i * 4, canary, 4);
    return bytes;
}

} // namespace

class TestOutputCheck : public QObject {
    Q_OBJECT

private slots:
    void masksCountAndCombine() {
        ElementMask m(130);
        QCOMPARE(m.count(), std::int64_t(0));
        m.set(0);
        m.set(64);
        m.set(129);
        QCOMPARE(m.count(), std::int64_t(3));
        QVERIFY(m.test(129) && !m.test(128));
        ElementMask other(130);
        other.set(1);
        other.set(64);
        ElementMask both = m;
        both.intersect(other);
        QCOMPARE(both.count(), std::int64_t(1));
        m.unite(other);
        QCOMPARE(m.count(), std::int64_t(4));
        const ElementGap gap = unsetIn(m);
        QCOMPARE(gap.count, std::int64_t(126));
        QCOMPARE(gap.first, std::int64_t(2));
        QCOMPARE(lastSetIn(m), std::int64_t(129));
        QCOMPARE(lastSetIn(other), std::int64_t(64)); // the last set in a word before the last word
        QCOMPARE(lastSetIn(ElementMask(130)), std::int64_t(-1));
    }

    void canaryShowsTheElementsNeverWritten() {
        // A quarter of 4096 floats left as the canary: 1,024 never written, the first at 3,072.
        const ArgumentSpec out = output(ElementType::Float, 4096);
        std::vector<std::int64_t> skipped;
        for (std::int64_t i = 3072; i < 4096; ++i)
            skipped.push_back(i);
        const ElementMask reference = writtenOver(out, canaried(4096, {}), kCanary);
        QCOMPARE(reference.count(), std::int64_t(4096));
        const ElementMask run = writtenOver(out, canaried(4096, skipped), kCanary);
        QCOMPARE(run.count(), std::int64_t(3072));
        const ElementGap gap = missingFrom(reference, run);
        QCOMPARE(gap.count, std::int64_t(1024));
        QCOMPARE(gap.first, std::int64_t(3072));
        QCOMPARE(unwrittenMessage(out, gap, true),
                 std::string("argument 'out': 1,024 of 4,096 elements never written, the first at 3,072"));
        // Writing more than the reference is no gap.
        QCOMPARE(missingFrom(run, reference).count, std::int64_t(0));
    }

    void secondCanaryConfirms() {
        // An int32 output that really holds all ones at element 5 (-1, a legitimate value): the
        // first canary cannot tell it from unwritten, the second can.
        ArgumentSpec out = output(ElementType::Int32, 8);
        std::vector<std::int32_t> values{1, 2, 3, 4, 5, -1, 7, 8};
        std::vector<unsigned char> first = bytesOf(values);
        std::memset(first.data() + 7 * 4, kCanary, 4); // element 7 never written
        std::vector<unsigned char> second = bytesOf(values);
        std::memset(second.data() + 7 * 4, kSecondCanary, 4);
        ElementMask written = writtenOver(out, first, kCanary);
        QCOMPARE(written.count(), std::int64_t(6)); // 5 and 7 look unwritten
        written.unite(writtenOver(out, second, kSecondCanary));
        QCOMPARE(written.count(), std::int64_t(7));
        QCOMPARE(unsetIn(written).first, std::int64_t(7));
    }

    void readWriteOutputsJudgedByTheirInitialContents() {
        // A ReadWrite output of zeros: elements a config left at zero where the reference config
        // changed them beyond rounding are missing; a change below the rounding is not counted.
        ArgumentSpec out = output(ElementType::Float, 8);
        out.access = Access::ReadWrite;
        const std::vector<unsigned char> initial = bytesOf(std::vector<float>(8, 0.0f));
        const std::vector<unsigned char> ref = bytesOf(std::vector<float>{1, 2, 3, 4, 5, 6, 1e-9f, 0});
        const ElementMask refChanged = changedBeyond(out, ref, initial, defaultTolerance(out.element));
        QCOMPARE(refChanged.count(), std::int64_t(6)); // 1e-9 of a scale of 6 is rounding, 0 is unchanged
        const std::vector<unsigned char> config = bytesOf(std::vector<float>{1, 2, 0, 0, 5, 6, 0, 0});
        const ElementMask changed = changedFrom(out, config, initial);
        QCOMPARE(changed.count(), std::int64_t(4));
        const ElementGap gap = missingFrom(refChanged, changed);
        QCOMPARE(gap.count, std::int64_t(2));
        QCOMPARE(gap.first, std::int64_t(2));
        QCOMPARE(unwrittenMessage(out, gap, false),
                 std::string("argument 'out': 2 of 8 elements keep their initial contents where the reference config "
                             "changed them, the first at 2 (never written?)"));
    }

    void nonFiniteValuesWhereTheReferenceIsFinite() {
        const ArgumentSpec out = output(ElementType::Float, 6);
        const float nan = std::numeric_limits<float>::quiet_NaN();
        const float inf = std::numeric_limits<float>::infinity();
        const std::vector<unsigned char> ref = bytesOf(std::vector<float>{1, nan, 3, 4, 5, 6});
        const std::vector<unsigned char> run = bytesOf(std::vector<float>{1, nan, nan, 4, -inf, 6});
        const ElementMask finite = finiteValues(out, ref);
        QCOMPARE(finite.count(), std::int64_t(5));
        const NonFinite found = nonFiniteValues(out, run, &finite);
        QCOMPARE(found.count, std::int64_t(2)); // element 1 is NaN in the reference too
        QCOMPARE(found.first, std::int64_t(2));
        QVERIFY(std::isnan(found.firstValue));
        QCOMPARE(nonFiniteMessage(out, found, true),
                 std::string("argument 'out': 2 elements are NaN or Inf where the reference config's are finite, the "
                             "first at 2 (nan)"));
        QCOMPARE(nonFiniteValues(out, run).count, std::int64_t(3));
        // Integers have no NaN.
        const ArgumentSpec ints = output(ElementType::Int32, 2);
        QCOMPARE(nonFiniteValues(ints, bytesOf(std::vector<std::int32_t>{-1, -1})).count, std::int64_t(0));
    }

    // An output that ends before the reference's (a sum per block, as many as the config's blocks,
    // in a buffer sized for the most) is told from one with holes, and from a grid too small for
    // its output: every element it leaves lies past the last one it wrote, one written a block.
    void anOutputThatEndsEarly() {
        const ArgumentSpec out = output(ElementType::Float, 1000);
        const std::vector<unsigned char> ref = canaried(1000, {});
        std::vector<std::int64_t> tail;
        for (std::int64_t i = 600; i < 1000; ++i)
            tail.push_back(i);
        const OutputScan shorter =
            scanOutput(out, canaried(1000, tail), kCanary, {}, writtenOver(out, ref, kCanary), finiteValues(out, ref));
        QCOMPARE(shorter.unwritten.count, std::int64_t(400));
        QCOMPARE(shorter.lastWritten, std::int64_t(599));
        QVERIFY(shorter.endsEarly(600));  // 600 blocks, a sum each
        QVERIFY(!shorter.endsEarly(5));   // 5 blocks of 120 threads that do not cover the output
        QVERIFY(!shorter.endsEarly(601)); // a block whose result is missing
        std::vector<std::int64_t> holes{10, 11, 12, 700};
        const OutputScan holed =
            scanOutput(out, canaried(1000, holes), kCanary, {}, writtenOver(out, ref, kCanary), finiteValues(out, ref));
        QCOMPARE(holed.lastWritten, std::int64_t(999));
        QVERIFY(!holed.endsEarly(1000));
        tail.push_back(300); // the tail and a hole before it
        QVERIFY(
            !scanOutput(out, canaried(1000, tail), kCanary, {}, writtenOver(out, ref, kCanary), finiteValues(out, ref))
                 .endsEarly(600));
        const OutputScan whole =
            scanOutput(out, ref, kCanary, {}, writtenOver(out, ref, kCanary), finiteValues(out, ref));
        QVERIFY(!whole.endsEarly(1000)); // nothing left: nothing ends early
        QCOMPARE(whole.lastWritten, std::int64_t(999));
    }

    void comparisonChecksTheWritesInTheSamePass() {
        // Verifying, the comparison with the reference's values finds what the scan finds.
        const ArgumentSpec out = output(ElementType::Float, 4096);
        std::vector<std::int64_t> skipped{5, 100, 4095};
        const std::vector<unsigned char> ref = canaried(4096, {});
        std::vector<unsigned char> run = canaried(4096, skipped);
        const float nan = std::numeric_limits<float>::quiet_NaN();
        std::memcpy(run.data() + 7 * 4, &nan, 4);
        const WriteCheck check{true, kCanary, {}};
        const Verdict v = compareValues(out, run, ref, Validation::Normalized, defaultTolerance(out.element), &check);
        QCOMPARE(v.unwritten.count, std::int64_t(3));
        QCOMPARE(v.unwritten.first, std::int64_t(5));
        QCOMPARE(v.nonFinite.count, std::int64_t(1));
        QCOMPARE(v.nonFinite.first, std::int64_t(7));
        const OutputScan scan =
            scanOutput(out, run, kCanary, {}, writtenOver(out, ref, kCanary), finiteValues(out, ref));
        QCOMPARE(scan.unwritten.count, v.unwritten.count);
        QCOMPARE(scan.unwritten.first, v.unwritten.first);
        QCOMPARE(scan.nonFinite.count, v.nonFinite.count);
        // The other way round: the reference left them (a Partial output), this config wrote them.
        const Verdict back =
            compareValues(out, ref, run, Validation::Normalized, defaultTolerance(out.element), &check);
        QCOMPARE(back.unwritten.count, std::int64_t(0));
        QCOMPARE(back.extra, std::int64_t(3));
        // Equal bit for bit: nothing to find, and nothing done.
        const Verdict same =
            compareValues(out, ref, ref, Validation::Normalized, defaultTolerance(out.element), &check);
        QVERIFY(same.ok && same.unwritten.count == 0 && same.extra == 0 && same.nonFinite.count == 0);

        // A ReadWrite output of zeros: left at zero where the reference changed it beyond rounding.
        ArgumentSpec rw = output(ElementType::Float, 4);
        rw.access = Access::ReadWrite;
        const std::vector<unsigned char> zeros = bytesOf(std::vector<float>(4, 0.0f));
        const WriteCheck fromZeros{false, kCanary, zeros};
        const Verdict kept =
            compareValues(rw, bytesOf(std::vector<float>{1, 0, 3, 0}), bytesOf(std::vector<float>{1, 2, 3, 1e-9f}),
                          Validation::Normalized, defaultTolerance(rw.element), &fromZeros);
        QCOMPARE(kept.unwritten.count, std::int64_t(1)); // element 3's 1e-9 is rounding, not a write
        QCOMPARE(kept.unwritten.first, std::int64_t(1));
    }

    void verdictCountsTheValuesBeyondTheTolerance() {
        // Three of 1,000 values off: the verdict says how many, not only the worst.
        const ArgumentSpec out = output(ElementType::Float, 1000);
        std::vector<float> ref(1000, 1.0f);
        std::vector<float> run = ref;
        run[10] = 2.0f;
        run[500] = 1.5f;
        run[999] = 0.0f;
        const Verdict v =
            compareValues(out, bytesOf(run), bytesOf(ref), Validation::Normalized, defaultTolerance(out.element));
        QVERIFY(!v.ok);
        QCOMPARE(v.mismatched, std::int64_t(3));
        QVERIFY2(v.message.find("(3 of 1,000 values beyond the tolerance)") != std::string::npos, v.message.c_str());
    }
};

QTEST_GUILESS_MAIN(TestOutputCheck)
#include "tst_outputcheck.moc"
