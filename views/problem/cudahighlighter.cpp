#include "problem/cudahighlighter.h"

#include <QStringList>

namespace tilescope::views {

namespace {

enum BlockState { kNormal = 0, kInComment = 1 };

QTextCharFormat charFormat(const QColor& colour, bool bold = false, bool italic = false) {
    QTextCharFormat f;
    f.setForeground(colour);
    if (bold)
        f.setFontWeight(QFont::DemiBold);
    f.setFontItalic(italic);
    return f;
}

QRegularExpression words(const QStringList& list) {
    return QRegularExpression(QStringLiteral("\\b(?:%1)\\b").arg(list.join(QLatin1Char('|'))));
}

} // namespace

CudaHighlighter::CudaHighlighter(QTextDocument* document)
    : QSyntaxHighlighter(document)
    , m_commentStart(QStringLiteral("/\\*"))
    , m_commentEnd(QStringLiteral("\\*/")) {
    buildRules();
}

void CudaHighlighter::setDarkBackground(bool dark) {
    if (dark == m_dark)
        return;
    m_dark = dark;
    buildRules();
    rehighlight();
}

void CudaHighlighter::buildRules() {
    // Two sets of colours, each readable on its background (contrast >= 4.5 against white or
    // against a #1e1e1e-ish dark base).
    const QColor keyword = m_dark ? QColor(0x56, 0x9c, 0xd6) : QColor(0x00, 0x33, 0xb3);
    const QColor type = m_dark ? QColor(0x4e, 0xc9, 0xb0) : QColor(0x00, 0x6e, 0x6e);
    const QColor cuda = m_dark ? QColor(0xc5, 0x86, 0xc0) : QColor(0x87, 0x10, 0x94);
    const QColor number = m_dark ? QColor(0xb5, 0xce, 0xa8) : QColor(0x17, 0x50, 0xeb);
    const QColor string = m_dark ? QColor(0xce, 0x91, 0x78) : QColor(0xa3, 0x15, 0x15);
    const QColor preprocessor = m_dark ? QColor(0xd7, 0xba, 0x7d) : QColor(0x80, 0x50, 0x00);
    const QColor comment = m_dark ? QColor(0x8a, 0x99, 0x8a) : QColor(0x5f, 0x6b, 0x5f);

    m_rules.clear();
    m_rules.push_back({QRegularExpression(QStringLiteral(
                           "\\b(?:0[xX][0-9a-fA-F']+|[0-9][0-9']*\\.?[0-9]*(?:[eE][+-]?[0-9]+)?)[uUlLfF]*\\b")),
                       charFormat(number)});
    m_rules.push_back({words({QStringLiteral("alignas"),     QStringLiteral("alignof"),
                              QStringLiteral("auto"),        QStringLiteral("break"),
                              QStringLiteral("case"),        QStringLiteral("class"),
                              QStringLiteral("const"),       QStringLiteral("consteval"),
                              QStringLiteral("constexpr"),   QStringLiteral("continue"),
                              QStringLiteral("default"),     QStringLiteral("delete"),
                              QStringLiteral("do"),          QStringLiteral("else"),
                              QStringLiteral("enum"),        QStringLiteral("explicit"),
                              QStringLiteral("extern"),      QStringLiteral("false"),
                              QStringLiteral("for"),         QStringLiteral("goto"),
                              QStringLiteral("if"),          QStringLiteral("inline"),
                              QStringLiteral("namespace"),   QStringLiteral("new"),
                              QStringLiteral("noexcept"),    QStringLiteral("nullptr"),
                              QStringLiteral("operator"),    QStringLiteral("private"),
                              QStringLiteral("protected"),   QStringLiteral("public"),
                              QStringLiteral("return"),      QStringLiteral("sizeof"),
                              QStringLiteral("static"),      QStringLiteral("static_assert"),
                              QStringLiteral("static_cast"), QStringLiteral("reinterpret_cast"),
                              QStringLiteral("const_cast"),  QStringLiteral("struct"),
                              QStringLiteral("switch"),      QStringLiteral("template"),
                              QStringLiteral("this"),        QStringLiteral("true"),
                              QStringLiteral("typedef"),     QStringLiteral("typename"),
                              QStringLiteral("union"),       QStringLiteral("using"),
                              QStringLiteral("virtual"),     QStringLiteral("volatile"),
                              QStringLiteral("while")}),
                       charFormat(keyword, true)});
    m_rules.push_back(
        {words({QStringLiteral("void"), QStringLiteral("bool"), QStringLiteral("char"), QStringLiteral("short"),
                QStringLiteral("int"), QStringLiteral("long"), QStringLiteral("unsigned"), QStringLiteral("signed"),
                QStringLiteral("float"), QStringLiteral("double"), QStringLiteral("half"), QStringLiteral("__half"),
                QStringLiteral("__nv_bfloat16"), QStringLiteral("__nv_fp8_e4m3"), QStringLiteral("__nv_fp8_e5m2"),
                QStringLiteral("size_t"), QStringLiteral("u?int(?:8|16|32|64)_t"),
                QStringLiteral("(?:float|double|int|uint|half)[1-4]"), QStringLiteral("dim3")}),
         charFormat(type)});
    m_rules.push_back(
        {words({QStringLiteral("__global__"), QStringLiteral("__device__"), QStringLiteral("__host__"),
                QStringLiteral("__shared__"), QStringLiteral("__constant__"), QStringLiteral("__restrict__"),
                QStringLiteral("__forceinline__"), QStringLiteral("__noinline__"), QStringLiteral("__launch_bounds__"),
                QStringLiteral("__syncthreads"), QStringLiteral("__syncwarp"), QStringLiteral("__shfl\\w*"),
                QStringLiteral("__ldg"), QStringLiteral("__fmaf_\\w+"), QStringLiteral("threadIdx"),
                QStringLiteral("blockIdx"), QStringLiteral("blockDim"), QStringLiteral("gridDim"),
                QStringLiteral("warpSize")}),
         charFormat(cuda, true)});
    m_rules.push_back(
        {QRegularExpression(QStringLiteral(R"("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')")), charFormat(string)});
    m_preprocessor = charFormat(preprocessor);
    m_comment = charFormat(comment, false, true);
}

void CudaHighlighter::highlightBlock(const QString& text) {
    // A preprocessor line takes one colour up to its comment; everything else goes by the rules.
    static const QRegularExpression directive(QStringLiteral("^\\s*#\\s*\\w+"));
    if (previousBlockState() != kInComment && directive.match(text).hasMatch()) {
        setFormat(0, static_cast<int>(text.size()), m_preprocessor);
    } else {
        for (const Rule& rule : m_rules) {
            auto it = rule.pattern.globalMatch(text);
            while (it.hasNext()) {
                const auto match = it.next();
                setFormat(static_cast<int>(match.capturedStart()), static_cast<int>(match.capturedLength()),
                          rule.format);
            }
        }
    }

    // Comments win over everything: line comments, and block comments that may span lines.
    setCurrentBlockState(kNormal);
    qsizetype start = 0;
    if (previousBlockState() != kInComment) {
        start = -1;
        const qsizetype block = text.indexOf(m_commentStart);
        const qsizetype line = text.indexOf(QStringLiteral("//"));
        if (line >= 0 && (block < 0 || line < block)) {
            setFormat(static_cast<int>(line), static_cast<int>(text.size() - line), m_comment);
            return;
        }
        start = block;
    }
    while (start >= 0) {
        const auto end = m_commentEnd.match(text, start + (previousBlockState() == kInComment && start == 0 ? 0 : 2));
        qsizetype length = 0;
        if (!end.hasMatch()) {
            setCurrentBlockState(kInComment);
            length = text.size() - start;
        } else {
            length = end.capturedEnd() - start;
        }
        setFormat(static_cast<int>(start), static_cast<int>(length), m_comment);
        if (!end.hasMatch())
            break;
        const qsizetype nextBlock = text.indexOf(m_commentStart, start + length);
        const qsizetype nextLine = text.indexOf(QStringLiteral("//"), start + length);
        if (nextLine >= 0 && (nextBlock < 0 || nextLine < nextBlock)) {
            setFormat(static_cast<int>(nextLine), static_cast<int>(text.size() - nextLine), m_comment);
            break;
        }
        start = nextBlock;
    }
}

} // namespace tilescope::views
