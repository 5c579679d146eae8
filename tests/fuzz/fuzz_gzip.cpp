// Fuzzes the reader of recordings on disk: the bytes as a file (gzip-compressed or not), read
// whole as readRecording reads it, then told apart and parsed as a recording. The inflate limit
// is kept small (TILESCOPE_GZIP_LIMIT, 16M unless set) so that a bomb is refused fast.

#include "exchange/recording.h"
#include "exchange/textfile.h"
#include "fuzzing.h"

#include <filesystem>
#include <fstream>

#include <unistd.h>

using namespace tilescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::filesystem::path file = [] {
        ::setenv("TILESCOPE_GZIP_LIMIT", "16M", 0);
        return std::filesystem::temp_directory_path() /
               ("tilescope-fuzz-gzip-" + std::to_string(::getpid()) + ".json.gz");
    }();
    {
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    }
    fuzz::refuseCleanly("gzip", [&] { (void)exchange::readText(file); });
    fuzz::refuseCleanly("recording", [&] {
        for (const SessionData& session : readRecording(file))
            fuzz::expectSoundRecording("recording", session);
    });
    return 0;
}
