#include "base/sha256.h"

#include <openssl/evp.h>

#include <stdexcept>

namespace tilescope {

struct Sha256::Context {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    ~Context() { EVP_MD_CTX_free(ctx); }
};

namespace {
[[noreturn]] void fail(const char* what) {
    throw std::runtime_error(std::string("SHA-256 (libcrypto): ") + what + " failed");
}
} // namespace

Sha256::Sha256()
    : m_context(std::make_unique<Context>()) {
    if (!m_context->ctx || EVP_DigestInit_ex(m_context->ctx, EVP_sha256(), nullptr) != 1)
        fail("EVP_DigestInit_ex");
}

Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(const void* data, std::size_t size) {
    if (size > 0 && EVP_DigestUpdate(m_context->ctx, data, size) != 1)
        fail("EVP_DigestUpdate");
}

void Sha256::updateU64(std::uint64_t value) {
    std::array<std::uint8_t, 8> bytes;
    for (std::size_t i = 0; i < bytes.size(); ++i)
        bytes[i] = static_cast<std::uint8_t>(value >> (8 * i));
    update(bytes.data(), bytes.size());
}

void Sha256::updateField(std::string_view text) {
    updateU64(text.size());
    update(text);
}

Sha256::Digest Sha256::finish() {
    Digest digest{};
    unsigned int size = 0;
    if (EVP_DigestFinal_ex(m_context->ctx, digest.data(), &size) != 1 || size != digest.size())
        fail("EVP_DigestFinal_ex");
    return digest;
}

Sha256::Digest Sha256::hash(std::string_view text) {
    Sha256 sha;
    sha.update(text);
    return sha.finish();
}

std::string Sha256::hex(const Digest& digest) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string text;
    text.reserve(2 * digest.size());
    for (std::uint8_t byte : digest) {
        text.push_back(kDigits[byte >> 4]);
        text.push_back(kDigits[byte & 15]);
    }
    return text;
}

} // namespace tilescope
