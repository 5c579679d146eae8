#include "spec/problemedit.h"

#include "base/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <set>

namespace tilescope::edit {

namespace {

using Json = nlohmann::ordered_json;

Json toJson(const TuningProblem& problem) {
    return Json::parse(problem.toJson());
}

TuningProblem fromJson(const TuningProblem& original, const Json& j) {
    TuningProblem edited = TuningProblem::parse(j.dump(2), original.fileName, original.baseDir);
    edited.baseDir = original.baseDir;
    return edited;
}

Json& section(Json& j, const char* name, const char* list) {
    Json& s = j[name];
    if (!s.is_object())
        s = Json::object();
    Json& l = s[list];
    if (!l.is_array())
        l = Json::array();
    return l;
}

// Replaces item `index` of `list`, or appends it when index == the list's size.
void putAt(Json& list, std::size_t index, Json item) {
    if (index < list.size())
        list[index] = std::move(item);
    else
        list.push_back(std::move(item));
}

void checkIndex(std::size_t index, std::size_t size, bool appendAllowed, const TuningProblem& p, const char* what) {
    if (index < size || (appendAllowed && index == size))
        return;
    throw InputError(p.fileName, "",
                     std::string(what) + " " + std::to_string(index) + " does not exist (there are " +
                         std::to_string(size) + ")");
}

// The T1 Type a new parameter's values suggest.
std::string typeOf(const std::string& values) {
    if (values.find('"') != std::string::npos || values.find('\'') != std::string::npos)
        return "string";
    if (values.find("True") != std::string::npos || values.find("False") != std::string::npos)
        return "bool";
    for (std::size_t i = 0; i + 1 < values.size(); ++i) {
        if (std::isdigit(static_cast<unsigned char>(values[i])) && values[i + 1] == '.')
            return "float";
    }
    return "int";
}

} // namespace

std::vector<std::string> parametersUsed(const TuningProblem& problem, const std::string& expression) {
    std::set<std::string> names;
    std::size_t i = 0;
    while (i < expression.size()) {
        const char c = expression[i];
        if (c == '"' || c == '\'') { // a string literal names nothing
            const std::size_t end = expression.find(c, i + 1);
            i = end == std::string::npos ? expression.size() : end + 1;
        } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            std::size_t j = i;
            while (j < expression.size() &&
                   (std::isalnum(static_cast<unsigned char>(expression[j])) || expression[j] == '_'))
                ++j;
            names.insert(expression.substr(i, j - i));
            i = j;
        } else {
            ++i;
        }
    }
    std::vector<std::string> used;
    for (const TuningParameter& p : problem.parameters) {
        if (names.count(p.name))
            used.push_back(p.name);
    }
    return used;
}

TuningProblem setCondition(const TuningProblem& problem, std::size_t index, const std::string& expression) {
    checkIndex(index, problem.conditions.size(), true, problem, "condition");
    Json j = toJson(problem);
    Json& conditions = section(j, "ConfigurationSpace", "Conditions");
    Json c = index < conditions.size() ? conditions[index] : Json::object();
    c["Parameters"] = parametersUsed(problem, expression);
    c["Expression"] = expression;
    putAt(conditions, index, std::move(c));
    return fromJson(problem, j);
}

TuningProblem setFields(const TuningProblem& problem, const std::vector<std::pair<std::string, Json>>& fields) {
    Json j = toJson(problem);
    for (const auto& [pointer, value] : fields) {
        const Json::json_pointer at(pointer);
        if (!value.is_null()) {
            j[at] = value;
            continue;
        }
        // Remove it, then any object that is left empty on the way up (never the root).
        Json::json_pointer field = at;
        while (!field.empty() && j.contains(field)) {
            const Json::json_pointer parent = field.parent_pointer();
            Json& holder = j[parent];
            if (holder.is_object())
                holder.erase(field.back());
            if (parent.empty() || !holder.empty())
                break;
            field = parent;
        }
    }
    // Fields that change nothing give the problem back as it is, even one that would not be
    // read again as it stands (its kernel file missing, say): a form applied unchanged is no edit.
    if (j == toJson(problem))
        return problem;
    TuningProblem edited = fromJson(problem, j);
    // A launch expression that does not compile only blocks launching a loaded file (its space
    // still opens); an edit that writes one is refused, like any other bad edit.
    for (const InputError& blocker : edited.launchBlockers) {
        for (const auto& field : fields) {
            if (blocker.location().rfind(field.first, 0) == 0)
                throw blocker;
        }
    }
    return edited;
}

TuningProblem removeCondition(const TuningProblem& problem, std::size_t index) {
    checkIndex(index, problem.conditions.size(), false, problem, "condition");
    Json j = toJson(problem);
    Json& conditions = section(j, "ConfigurationSpace", "Conditions");
    conditions.erase(conditions.begin() + static_cast<std::ptrdiff_t>(index));
    return fromJson(problem, j);
}

TuningProblem setParameter(const TuningProblem& problem, std::size_t index, const std::string& name,
                           const std::string& valuesText) {
    checkIndex(index, problem.parameters.size(), true, problem, "parameter");
    Json j = toJson(problem);
    Json& parameters = section(j, "ConfigurationSpace", "TuningParameters");
    Json p = index < parameters.size() ? parameters[index] : Json::object();
    p["Name"] = name;
    if (index == parameters.size())
        p["Type"] = typeOf(valuesText);
    p["Values"] = valuesText;
    putAt(parameters, index, std::move(p));
    return fromJson(problem, j);
}

TuningProblem removeParameter(const TuningProblem& problem, std::size_t index) {
    checkIndex(index, problem.parameters.size(), false, problem, "parameter");
    Json j = toJson(problem);
    Json& parameters = section(j, "ConfigurationSpace", "TuningParameters");
    parameters.erase(parameters.begin() + static_cast<std::ptrdiff_t>(index));
    return fromJson(problem, j);
}

TuningProblem moveParameter(const TuningProblem& problem, std::size_t from, std::size_t to) {
    checkIndex(from, problem.parameters.size(), false, problem, "parameter");
    checkIndex(to, problem.parameters.size(), false, problem, "parameter");
    Json j = toJson(problem);
    Json& parameters = section(j, "ConfigurationSpace", "TuningParameters");
    Json moved = parameters[from];
    parameters.erase(parameters.begin() + static_cast<std::ptrdiff_t>(from));
    parameters.insert(parameters.begin() + static_cast<std::ptrdiff_t>(to), std::move(moved));
    return fromJson(problem, j);
}

} // namespace tilescope::edit
