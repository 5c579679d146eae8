// Fuzzes the T4 reader: a results file's text in; a session it accepts must hold only results a
// recording may (fuzzing.h: no ok time of 0 or below, no unnamed status, no empty configuration)
// and write T4 that reads back the same way. The driver's value replacements reach the time and
// status fields of the seeds in tests/data/fuzz/t4/.

#include "exchange/t4.h"
#include "fuzzing.h"

using namespace tilescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    fuzz::refuseCleanly("T4", [&] {
        const SessionData session = parseT4(text, "fuzz.t4.json");
        fuzz::expectSoundRecording("T4", session);
        const nlohmann::ordered_json doc = tryParseJson(text);
        if (doc.is_object() && doc.contains("results") && doc["results"].is_array())
            for (const auto& result : doc["results"])
                fuzz::expectKnownFields("T4", result,
                                        result.contains("configuration") ? &result["configuration"] : nullptr);
        fuzz::expectSoundRecording("T4 written and read back", parseT4(writeT4(session), "written.t4.json"));
    });
    return 0;
}
