// Fuzzes the Kernel Tuner cache reader: a cache file's text in; a session it accepts must be
// written as a cache that reads back.

#include "exchange/kerneltunercache.h"
#include "fuzzing.h"

using namespace tilescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    fuzz::refuseCleanly("Kernel Tuner cache", [&] {
        const SessionData session = parseKernelTunerCache(text, "fuzz.json");
        (void)parseKernelTunerCache(writeKernelTunerCache(session), "written.json");
    });
    return 0;
}
