#pragma once

// SHA-256 (FIPS 180-4), for content-addressed cache keys and entry checksums. Small and
// dependency-free: core links no crypto library, and the cache needs a hash that collides
// for no practical input, not a fast one (a key hashes ~10 KB per compile of ~0.5 s).

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace tilescope {

class Sha256 {
public:
    using Digest = std::array<std::uint8_t, 32>;

    Sha256();
    void update(const void* data, std::size_t size);
    void update(std::string_view text) { update(text.data(), text.size()); }
    /// Feeds a length prefix and then the bytes, so that concatenations of fields cannot alias
    /// ("ab"+"c" and "a"+"bc" hash differently).
    void updateField(std::string_view text);
    void updateU64(std::uint64_t value);
    /// The digest; the object must not be updated afterwards.
    Digest finish();

    static Digest hash(std::string_view text);
    /// 64 lowercase hex digits.
    static std::string hex(const Digest& digest);

private:
    void block(const std::uint8_t* chunk);

    std::array<std::uint32_t, 8> m_state;
    std::array<std::uint8_t, 64> m_buffer{};
    std::size_t m_buffered = 0;
    std::uint64_t m_length = 0; // bytes
};

} // namespace tilescope
