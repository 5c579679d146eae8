// Fuzzes the results database opener: the bytes as a database file, opened read-only as `show`
// and the workbench open one, and every session and result read.

#include "fuzzing.h"
#include "store/resultstore.h"

#include <filesystem>
#include <fstream>

#include <unistd.h>

using namespace tilescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::filesystem::path file =
        std::filesystem::temp_directory_path() / ("tilescope-fuzz-store-" + std::to_string(::getpid()) + ".db");
    {
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    }
    fuzz::refuseCleanly("database", [&] {
        const ResultStore store = ResultStore::open(file, StoreMode::ReadOnly);
        for (const SessionInfo& s : store.sessions())
            (void)store.results(s.id, true);
    });
    return 0;
}
