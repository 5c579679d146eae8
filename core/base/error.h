#pragma once

#include <stdexcept>
#include <string>

namespace tilescope {

/// An error the user caused (bad JSON, a bad expression, a missing file, a bad option).
/// It says what went wrong and where: the file, the location inside it (a JSON pointer such
/// as "/ConfigurationSpace/Conditions/2/Expression", or "line 4, column 7"), and the message.
/// Programs report it and exit with status 2; it never means a bug in Tilescope.
class InputError : public std::runtime_error {
public:
    InputError(std::string file, std::string location, std::string message);

    const std::string& file() const { return m_file; }
    const std::string& location() const { return m_location; }
    const std::string& message() const { return m_message; }

private:
    std::string m_file;
    std::string m_location;
    std::string m_message;
};

/// Work stopped because the caller asked it to (a cancel flag); not an error to report.
class Cancelled : public std::runtime_error {
public:
    Cancelled()
        : std::runtime_error("cancelled") {}
};

} // namespace tilescope
