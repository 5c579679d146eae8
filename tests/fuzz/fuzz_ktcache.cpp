// Fuzzes the Kernel Tuner cache reader: a cache file's text in; a session it accepts must hold
// only results a recording may (fuzzing.h: no ok time of 0 or below, no unnamed status, no empty
// configuration) and be written as a cache that reads back the same way. The driver's value
// replacements reach the time fields (numbers and Kernel Tuner's failure markers) and the
// statuses of the seeds in tests/data/fuzz/ktcache/.

#include "exchange/kerneltunercache.h"
#include "fuzzing.h"

using namespace tilescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    fuzz::refuseCleanly("Kernel Tuner cache", [&] {
        const SessionData session = parseKernelTunerCache(text, "fuzz.json");
        fuzz::expectSoundRecording("Kernel Tuner cache", session);
        // A failure marker ("__error__", else "time" when a string) must be one of Kernel Tuner's;
        // an entry's "tilescope" status one of ours.
        const nlohmann::ordered_json doc = tryParseJson(text); // an open cache: not checked here
        if (doc.is_object() && doc.contains("cache") && doc["cache"].is_object())
            for (const auto& [key, entry] : doc["cache"].items()) {
                fuzz::expectKnownFields("Kernel Tuner cache", entry, nullptr);
                if (!entry.is_object())
                    continue;
                const auto error = entry.find("__error__");
                const auto marker = error != entry.end() && error->is_string() ? error : entry.find("time");
                if (marker == entry.end() || !marker->is_string())
                    continue;
                const std::string name = marker->get<std::string>();
                if (name != "InvalidConfig" && name != "CompilationFailedConfig" && name != "RuntimeFailedConfig" &&
                    name != "ErrorConfig") {
                    std::fprintf(stderr, "Kernel Tuner cache: accepted the unknown marker %s\n", name.c_str());
                    std::abort();
                }
            }
    });
    return 0;
}
