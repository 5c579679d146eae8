#include "analysis/sourcelines.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <tuple>

namespace tilescope {

LineCounts countByLine(const SassFunction& function) {
    LineCounts counts;
    counts.hasLineInfo = function.hasLineInfo;
    counts.spillsMarked = function.spillsMarked;
    std::map<std::pair<std::string, int>, SourceLine> byLine;
    for (const SassInstruction& ins : function.instructions) {
        SourceLine& l = byLine[{ins.file, ins.line}];
        l.file = ins.file;
        l.line = ins.line;
        ++l.instructions;
        ++counts.instructions;
        const bool store = ins.localStore();
        const bool load = ins.localLoad();
        if (!store && !load)
            continue;
        l.localInstructions.push_back(ins.text + (ins.spill ? "  (spill)" : ""));
        int& slot = ins.spill ? (store ? l.spillStores : l.spillLoads) : (store ? l.localStores : l.localLoads);
        int& total = ins.spill ? (store ? counts.spillStores : counts.spillLoads)
                               : (store ? counts.localStores : counts.localLoads);
        ++slot;
        ++total;
    }
    for (auto& [key, line] : byLine)
        counts.lines.push_back(std::move(line));
    return counts;
}

std::size_t addExecuted(LineCounts& counts, const SassFunction& function,
                        const std::vector<InstructionCount>& executed) {
    std::map<std::uint32_t, const SassInstruction*> byOffset;
    for (const SassInstruction& ins : function.instructions)
        byOffset.emplace(ins.offset, &ins);
    std::map<std::pair<std::string, int>, SourceLine*> lines;
    for (SourceLine& l : counts.lines)
        lines.emplace(std::make_pair(l.file, l.line), &l);
    std::size_t unmatched = 0;
    for (const InstructionCount& c : executed) {
        const auto it = byOffset.find(c.offset);
        const auto line = it == byOffset.end() ? lines.end() : lines.find({it->second->file, it->second->line});
        if (line == lines.end()) {
            ++unmatched;
            continue;
        }
        const SassInstruction& ins = *it->second;
        SourceLine& l = *line->second;
        l.executedInstructions += c.executed;
        counts.executedInstructions += c.executed;
        const bool store = ins.localStore();
        if (!store && !ins.localLoad())
            continue;
        std::uint64_t& slot = ins.spill ? (store ? l.executedSpillStores : l.executedSpillLoads)
                                        : (store ? l.executedLocalStores : l.executedLocalLoads);
        std::uint64_t& total = ins.spill ? (store ? counts.executedSpillStores : counts.executedSpillLoads)
                                         : (store ? counts.executedLocalStores : counts.executedLocalLoads);
        slot += c.executed;
        total += c.executed;
    }
    counts.hasExecuted = true;
    return unmatched;
}

std::vector<SourceLine> localLines(const LineCounts& counts) {
    std::vector<SourceLine> out;
    for (const SourceLine& l : counts.lines)
        if (l.localTraffic() > 0)
            out.push_back(l);
    if (counts.hasExecuted) {
        std::stable_sort(out.begin(), out.end(), [](const SourceLine& a, const SourceLine& b) {
            return a.executedLocalTraffic() > b.executedLocalTraffic();
        });
        return out;
    }
    std::stable_sort(out.begin(), out.end(), [](const SourceLine& a, const SourceLine& b) {
        return std::make_tuple(-a.spills(), -a.localTraffic()) < std::make_tuple(-b.spills(), -b.localTraffic());
    });
    return out;
}

const SassFunction* findFunction(const Disassembly& disassembly, const std::string& entryName) {
    for (const SassFunction& f : disassembly.functions)
        if (f.name == entryName)
            return &f;
    return nullptr;
}

std::vector<LineDifference> lineDifferences(const LineCounts& a, const LineCounts& b) {
    std::map<std::pair<std::string, int>, LineDifference> byLine;
    for (const SourceLine& l : a.lines) {
        LineDifference& d = byLine[{l.file, l.line}];
        d.file = l.file;
        d.line = l.line;
        d.spillsA = l.spills();
        d.localA = l.localTraffic();
    }
    for (const SourceLine& l : b.lines) {
        LineDifference& d = byLine[{l.file, l.line}];
        d.file = l.file;
        d.line = l.line;
        d.spillsB = l.spills();
        d.localB = l.localTraffic();
    }
    std::vector<LineDifference> out;
    for (auto& [key, d] : byLine)
        if (d.spillsA != d.spillsB || d.localA != d.localB)
            out.push_back(d);
    std::stable_sort(out.begin(), out.end(), [](const LineDifference& x, const LineDifference& y) {
        return std::abs(x.localA - x.localB) > std::abs(y.localA - y.localB);
    });
    return out;
}

} // namespace tilescope
