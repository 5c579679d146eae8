#include "panellinks.h"

#include "common/errorbanner.h"
#include "plots/heatmapwidget.h"
#include "problem/compilecheck.h"
#include "problem/kernelsourcepanel.h"
#include "problem/sourceview.h"
#include "problem/spacecontroller.h"

#include "analysis/launchcheck.h"

#include <QComboBox>
#include <QDockWidget>

#include <unordered_set>

namespace tilescope::views {

void linkCompileCheckToSource(CompileCheckPanel* check, KernelSourcePanel* source, QDockWidget* sourceDock) {
    QObject::connect(check->archBox(), &QComboBox::currentTextChanged, source, &KernelSourcePanel::setArch);
    source->setArch(check->archBox()->currentText());
    QObject::connect(check, &CompileCheckPanel::showSourceLine, source, [source, sourceDock](int line) {
        sourceDock->show();
        sourceDock->raise();
        source->sourceView()->showLine(line);
    });
}

void linkSourceToHeatmap(KernelSourcePanel* source, HeatmapWidget* heatmap, QDockWidget* heatmapDock) {
    QObject::connect(source, &KernelSourcePanel::lineCountsRequested, heatmap, [source, heatmap](int line) {
        std::vector<QString> configs;
        if (const auto results = heatmap->results()) {
            std::unordered_set<std::string> seen;
            for (const ResultRecord& r : *results)
                if (r.ok() && seen.insert(configJson(r.config)).second)
                    configs.push_back(QString::fromStdString(configJson(r.config)));
        }
        source->countLine(line, std::move(configs));
    });
    QObject::connect(source, &KernelSourcePanel::lineQuantity, heatmap, [heatmap, heatmapDock](const Quantity& q) {
        HeatmapSpec spec = heatmap->spec();
        spec.quantity = q;
        heatmap->setSpec(spec);
        heatmapDock->show();
        heatmapDock->raise();
    });
}

void sayLaunchWarnings(ErrorBanner* banner, const SpaceResult& result, const QString& problemName, QStringList& shown) {
    QStringList warnings;
    if (result.ok()) {
        for (const LaunchWarning& w : checkLaunch(*result.problem, result.shapeIndex, *result.space))
            warnings << QStringLiteral("%1: %2").arg(QString::fromStdString(w.location),
                                                     QString::fromStdString(w.message));
    }
    if (warnings == shown)
        return;
    shown = warnings;
    const QString title = QObject::tr("The launch of %1 looks wrong").arg(problemName);
    if (warnings.isEmpty()) {
        // An edit fixed it: the banner that said so goes.
        if (banner->isVisible() && banner->title() == title)
            banner->hide();
        return;
    }
    if (!banner->isVisible())
        banner->showMessage(ErrorBanner::Level::Warning, title, warnings.join(QStringLiteral("\n\n")));
}

} // namespace tilescope::views
