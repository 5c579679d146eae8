#pragma once

// SHA-256 for content-addressed cache keys, entry checksums and problem hashes, computed by
// OpenSSL's libcrypto. A thin value-typed wrapper that adds the field framing the keys rely on.

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace tilescope {

class Sha256 {
public:
    using Digest = std::array<std::uint8_t, 32>;

    Sha256();
    ~Sha256();
    Sha256(Sha256&&) noexcept;
    Sha256& operator=(Sha256&&) noexcept;

    void update(const void* data, std::size_t size);
    void update(std::string_view text) { update(text.data(), text.size()); }
    /// Feeds a length prefix and then the bytes, so that concatenations of fields cannot alias
    /// ("ab"+"c" and "a"+"bc" hash differently).
    void updateField(std::string_view text);
    /// Eight bytes, little-endian.
    void updateU64(std::uint64_t value);
    /// The digest; the object must not be updated afterwards.
    Digest finish();

    static Digest hash(std::string_view text);
    /// 64 lowercase hex digits.
    static std::string hex(const Digest& digest);

private:
    struct Context;
    std::unique_ptr<Context> m_context;
};

} // namespace tilescope
