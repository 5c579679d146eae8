// core/analysis's clocks (clocks.h): the device state measured around a session's samples, the
// range over a session, and the sentence the provenance gives of it.

#include "analysis/clocks.h"
#include "model/records.h"

#include <QtTest>

#include <nlohmann/json.hpp>

#include <string>

using namespace tilescope;

class TestClocks : public QObject {
    Q_OBJECT

private slots:
    void measuredDeviceState();
};

void TestClocks::measuredDeviceState() {
    // Steady clocks: no note, the range in the provenance and a sentence for people.
    DeviceStateRange steady;
    for (int i = 0; i < 20; ++i)
        steady.add(DeviceState{1980 - (i % 3) * 15, 3201, 35 + i / 4, 0, 300.0 + i, 0});
    QCOMPARE(steady.count(), std::size_t(20));
    QCOMPARE(steady.movedNote(), std::string()); // 1950-1980 MHz is within 2 %
    const auto j = nlohmann::json::parse(steady.json());
    QCOMPARE(j["sm_clock_mhz"][0].get<int>(), 1950);
    QCOMPARE(j["sm_clock_mhz"][2].get<int>(), 1980);
    QCOMPARE(j["temperature_c"][1].get<int>(), 39);
    QCOMPARE(j["moved"].get<bool>(), false);
    const std::string provenance = nlohmann::json{{"measured_state", j}}.dump();
    bool moved = true;
    const std::string sentence = measuredStateSentence(provenance, &moved);
    QVERIFY(!moved);
    QVERIFY2(sentence.find("SM 1950-1980 MHz") == 0, sentence.c_str());
    QVERIFY2(sentence.find("memory 3201 MHz") != std::string::npos, sentence.c_str());
    QVERIFY2(sentence.find("P0") != std::string::npos, sentence.c_str());

    // A GPU that throttled: the SM clock fell by a third under a power cap, the P-state changed.
    DeviceStateRange throttled = steady;
    throttled.add(DeviceState{1320, 3201, 84, 2, 700, 0x4});
    const std::string note = throttled.movedNote();
    QVERIFY2(note.find("1320-1980 MHz") != std::string::npos, note.c_str());
    QVERIFY2(note.find("P-state") != std::string::npos, note.c_str());
    QVERIFY2(note.find("power cap") != std::string::npos, note.c_str());
    const std::string moving = nlohmann::json{{"measured_state", nlohmann::json::parse(throttled.json())}}.dump();
    QVERIFY(measuredStateSentence(moving, &moved).find("clocks moved") != std::string::npos);
    QVERIFY(moved);

    // Idle and application-clock reasons are normal; states without an SM clock are not counted.
    DeviceStateRange idle;
    idle.add(DeviceState{1980, 3201, 30, 0, 0, 0x1 | 0x2});
    idle.add(DeviceState{});
    QCOMPARE(idle.count(), std::size_t(1));
    QCOMPARE(idle.movedNote(), std::string());
    QCOMPARE(slowdownReasons(0x1 | 0x2), std::string());
    QCOMPARE(slowdownReasons(0x40 | 0x4), std::string("power cap, thermal (hardware)"));

    // Provenance without the state (other tools, older sessions), or not JSON at all.
    QCOMPARE(measuredStateSentence("{}"), std::string());
    QCOMPARE(measuredStateSentence("not json"), std::string());
    QCOMPARE(DeviceStateRange().json(), std::string("{}"));
    QCOMPARE(measurementContext(R"({"timing":{"context":"warm"}})").rfind("warm", 0), std::size_t(0));
    QCOMPARE(measurementContext(R"({"timing":{"flush_l2":true}})").rfind("flush", 0), std::size_t(0));
    QCOMPARE(measurementContext("{}"), std::string());

    // Versions and hashes, each part only when recorded.
    SessionInfo info;
    info.provenanceJson = R"({"devices":[{"driver_version":13000}],"nvrtc_version":"13.0","tool_version":"0.1.0"})";
    info.problemHash = std::string(64, 'a');
    info.sourceHash = "0123456789abcdef" + std::string(48, '0');
    QCOMPARE(provenanceSentence(info),
             std::string("driver 13.0, NVRTC 13.0, Tilescope 0.1.0; problem aaaaaaaa, kernel source 01234567"));
    // The compiler the session compiled with: nvcc's release for a problem compiled by nvcc.
    info.provenanceJson = R"({"nvcc_version":"13.0","tool_version":"0.1.0"})";
    QCOMPARE(provenanceSentence(info),
             std::string("nvcc 13.0, Tilescope 0.1.0; problem aaaaaaaa, kernel source 01234567"));
    QCOMPARE(provenanceCompiler(info.provenanceJson), std::string("nvcc 13.0"));
    QCOMPARE(provenanceCompiler(R"({"triton_version":"3.5.0"})"), std::string("Triton 3.5.0"));
    QCOMPARE(provenanceCompiler("{}"), std::string());
    QCOMPARE(provenanceCompiler("not json"), std::string());
    info.provenanceJson = "{}";
    info.problemHash.clear();
    QCOMPARE(provenanceSentence(info), std::string("kernel source 01234567"));
    info.sourceHash.clear();
    QCOMPARE(provenanceSentence(info), std::string());
}

QTEST_GUILESS_MAIN(TestClocks)
#include "tst_clocks.moc"
