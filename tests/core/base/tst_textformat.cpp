// Numbers, durations and lists written for people, the one way every report of the engine and
// the CLI writes them.

#include "base/textformat.h"

#include <QtTest>

#include <array>
#include <cmath>
#include <limits>
#include <set>
#include <string_view>
#include <vector>

using namespace tilescope;

class TestTextFormat : public QObject {
    Q_OBJECT

private slots:
    void durations_data() {
        QTest::addColumn<double>("seconds");
        QTest::addColumn<QString>("text");
        QTest::newRow("microseconds") << 0.0005 << "500 us";
        QTest::newRow("milliseconds") << 0.85 << "850 ms";
        QTest::newRow("seconds") << 12.34 << "12.3 s";
        QTest::newRow("minutes") << 245.0 << "4 min 05 s";
        QTest::newRow("hours") << 7800.0 << "2 h 10 min";
    }
    void durations() {
        QFETCH(double, seconds);
        QFETCH(QString, text);
        QCOMPARE(QString::fromStdString(formatDuration(seconds)), text);
    }

    void counts() {
        QCOMPARE(formatCount(0), std::string("0"));
        QCOMPARE(formatCount(999), std::string("999"));
        QCOMPARE(formatCount(1000), std::string("1,000"));
        QCOMPARE(formatCount(27680640625.0), std::string("27,680,640,625"));
        QCOMPARE(formatCount(2e18), std::string("2e+18"));
    }

    void numbers() {
        QCOMPARE(formatDouble("%.4g ms", 1.23456), std::string("1.235 ms"));
        QCOMPARE(formatFinite("%.3f", 0.5), std::string("0.500"));
        QCOMPARE(formatFinite("%.3f", std::numeric_limits<double>::quiet_NaN()), std::string("-"));
        QCOMPARE(formatFinite("%.3f", std::numeric_limits<double>::infinity()), std::string("-"));
    }

    void percents_data() {
        QTest::addColumn<double>("fraction");
        QTest::addColumn<int>("decimals");
        QTest::addColumn<QString>("text");
        QTest::newRow("two decimals") << 0.01234 << 2 << "1.23 %";
        QTest::newRow("one decimal") << 0.5 << 1 << "50.0 %";
        QTest::newRow("none") << 0.256 << 0 << "26 %";
        // Without decimals: whole percents from 10 % up, one decimal below.
        QTest::newRow("summary, large") << 0.456 << -1 << "46 %";
        QTest::newRow("summary, small") << 0.0456 << -1 << "4.6 %";
        QTest::newRow("summary, 10 %") << 0.1 << -1 << "10 %";
    }
    void percents() {
        QFETCH(double, fraction);
        QFETCH(int, decimals);
        QFETCH(QString, text);
        QCOMPARE(QString::fromStdString(formatPercent(fraction, decimals)), text);
    }

    void shares_data() {
        QTest::addColumn<double>("part");
        QTest::addColumn<double>("whole");
        QTest::addColumn<QString>("text");
        QTest::newRow("plain") << 77.0 << 1000.0 << "7.7 %";
        QTest::newRow("tiny") << 12.0 << 1e6 << "0.0012 %";
        QTest::newRow("none") << 0.0 << 1e6 << "0.0 %";
        QTest::newRow("no whole") << 5.0 << 0.0 << "0.0 %";
    }
    void shares() {
        QFETCH(double, part);
        QFETCH(double, whole);
        QFETCH(QString, text);
        QCOMPARE(QString::fromStdString(formatShare(part, whole)), text);
    }

    void lists() {
        QCOMPARE(joined(std::vector<std::string>{}), std::string());
        QCOMPARE(joined(std::vector<std::string>{"BLOCK"}), std::string("BLOCK"));
        QCOMPARE(joined(std::vector<std::string>{"BLOCK", "ITEMS", "NUM_WARPS"}),
                 std::string("BLOCK, ITEMS, NUM_WARPS"));
        QCOMPARE(joined(std::set<std::string>{"b", "a"}), std::string("a, b"));
        QCOMPARE(joined(std::array<const char*, 2>{"x", "y"}, " | "), std::string("x | y"));
        QCOMPARE(joined(std::vector<std::string_view>{"p", "q"}, "/"), std::string("p/q"));
    }
};

QTEST_GUILESS_MAIN(TestTextFormat)
#include "tst_textformat.moc"
