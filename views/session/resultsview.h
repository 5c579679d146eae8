#pragma once

// The results table: a filter box, the table (sortable, over a ResultsProxyModel), a count of
// the rows shown, and CSV copy of the selected rows or of every row shown (Ctrl+C, or the
// button). Selecting a row tells which config it is; selectConfig() selects a config's row
// from elsewhere (a heatmap click). The selection survives new snapshots.

#include "session/sessiontypes.h"

#include <QHash>
#include <QString>
#include <QWidget>

#include <string>
#include <vector>

class QLabel;
class QLineEdit;
class QPushButton;
class QTableView;
class QTimer;

namespace tilescope::views {

class ResultsModel;
class ResultsProxyModel;

class ResultsView : public QWidget {
    Q_OBJECT
public:
    explicit ResultsView(QWidget* parent = nullptr);
    ~ResultsView() override;

    ResultsModel* model() const { return m_model; }
    ResultsProxyModel* proxy() const { return m_proxy; }
    QTableView* table() const { return m_table; }
    QLineEdit* filterEdit() const { return m_filterEdit; }
    QPushButton* copyButton() const { return m_copyButton; }

    /// Shorthand for model()->setResults().
    void setResults(ResultsSnapshot results, std::vector<std::string> parameterNames, std::string objectiveName);

    /// Sorts the winners to the top: by the objective (higher first), or by time without one; results
    /// analysed, never timed (`untimed`), by their theoretical occupancy (higher first).
    void sortWinnersFirst(const std::string& objectiveName, bool untimed = false);
    /// Hides the time and objective columns of results analysed, never timed (`untimed`), which
    /// would stay empty, so that registers, spills and occupancy come into sight; shows them again
    /// otherwise.
    void showTimeColumns(bool shown);
    /// Sets the filter box's text and applies it at once (typing applies it after a pause).
    void setFilterText(const QString& text);
    /// The rows shown (after filtering).
    int visibleRowCount() const;
    /// CSV (RFC 4180, a header line first) of the selected rows, or of every row shown when none
    /// is selected, in the table's order and with its columns.
    QString selectionCsv() const;
    /// CSV of every row shown.
    QString allCsv() const;
    /// The config of the current row ("" none).
    QString currentConfig() const;

public slots:
    /// Selects the row of `configJson` (compact JSON) and scrolls to it, without emitting
    /// configSelected; clears the selection when the config is not shown.
    void selectConfig(const QString& configJson);
    /// Puts selectionCsv() on the clipboard.
    void copyCsv();

signals:
    /// The user selected a row: its config as compact JSON.
    void configSelected(const QString& configJson);

protected:
    void changeEvent(QEvent* event) override;

private:
    void fitHeaders();
    QString csvOf(const std::vector<int>& proxyRows) const;
    void applyFilter();
    void updateCount();
    void onCurrentChanged();

    ResultsModel* m_model;
    ResultsProxyModel* m_proxy;
    QLineEdit* m_filterEdit;
    QLabel* m_countLabel;
    QPushButton* m_copyButton;
    QTableView* m_table;
    QTimer* m_filterTimer;
    QString m_keptConfig;             // the current row's config across a reset
    bool m_selecting = false;         // selectConfig() is moving the selection: do not emit
    bool m_fitting = false;           // fitHeaders() is sizing the columns: not the user's widths
    QHash<QString, int> m_userWidths; // by column name: the widths the user gave
};

} // namespace tilescope::views
