#include "base/error.h"

namespace tilescope {

namespace {
std::string compose(const std::string& file, const std::string& location, const std::string& message) {
    std::string text;
    if (!file.empty())
        text += file + ": ";
    if (!location.empty())
        text += location + ": ";
    return text + message;
}
} // namespace

InputError::InputError(std::string file, std::string location, std::string message)
    : std::runtime_error(compose(file, location, message))
    , m_file(std::move(file))
    , m_location(std::move(location))
    , m_message(std::move(message)) {}

} // namespace tilescope
