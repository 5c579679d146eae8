// Fuzzes the T4 reader: a results file's text in; a session it accepts must write T4 that
// reads back.

#include "exchange/t4.h"
#include "fuzzing.h"

using namespace tilescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    fuzz::refuseCleanly("T4", [&] {
        const SessionData session = parseT4(text, "fuzz.t4.json");
        (void)parseT4(writeT4(session), "written.t4.json");
    });
    return 0;
}
