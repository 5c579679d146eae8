#pragma once

// The C++ export: a self-contained header with the best config per (shape, device) and a lookup
// by shape, and the pieces of generated code the other exports share (a config as a C++ struct,
// names as identifiers).

#include "exchange/bestconfigs.h"
#include "model/configvalues.h"

#include <string>
#include <vector>

namespace tilescope {

/// A C++17 header of its own (only <cstdint>): per kernel a namespace with a Config struct, a
/// constexpr table kEntries of the best config per (shape, device), `const Config*
/// lookup(shape dims...)` and `lookupOn(device, shape dims...)` (nullptr for a shape not tuned),
/// and their constexpr twins find() / findOn() giving the index in kEntries or -1.
/// `guardName` names the namespace that holds them all ("tilescope_tuned").
std::string writeCppHeader(const std::vector<BestConfig>& best, const std::string& guardName = "tilescope_tuned");

/// How Tilescope's C++ exports spell configs: a `Config` struct with a member per parameter (in
/// the first config's order, then any the others add), its type from the values it takes
/// (const char*, bool, long long or double), and each config as an initializer of that struct.
class CppConfigLayout {
public:
    explicit CppConfigLayout(const std::vector<const ConfigValues*>& configs);
    /// "struct Config {\n    long long BLOCK_M;\n ...};\n"
    std::string structDefinition() const;
    /// "{128LL, true, \"row\"}": `config`'s values (a missing one as 0, false or "").
    std::string initializer(const ConfigValues& config) const;

private:
    std::vector<std::string> m_params;
    std::vector<std::string> m_types;
    std::vector<std::string> m_ids;
};

/// `name` as an identifier for generated code, C++ or Python (other characters as _, a leading
/// digit prefixed, C++ and Python keywords and the generated code's own names suffixed with _),
/// or `fallback` when empty.
std::string cppIdentifier(const std::string& name, const std::string& fallback);

} // namespace tilescope
