/* Map and reduce expressions and map snippets: what gp__check_user_code accepts can never leave
 * the function it is pasted into. The oracle is a small model of how a C compiler reads the
 * generated text, written apart from the checker: trigraphs, then line splices, then comments,
 * literals and (digraph-aware) brackets. Within the user's text the bracket depth must never
 * fall below the function body's, no preprocessor line may start, and the marker placed after
 * the text must be read as code, inside the body. Also gp__vector_safe, on every text. */
#include "fuzz.h"

typedef struct ch {
    char c;
    int user; /* 1 when the character comes from the user's text */
} ch;

/* Phases 1 and 2: trigraphs replaced, backslash-newlines removed. */
static size_t translate(const char *src, size_t user_from, size_t user_to, ch *out)
{
    static const char tri_from[] = "=/'()!<>-", tri_to[] = "#\\^[]|{}~";
    ch tmp[8192];
    size_t n = 0;
    for (size_t i = 0; src[i]; i++) {
        char c = src[i];
        const char *t;
        if (c == '?' && src[i + 1] == '?' && src[i + 2] && (t = strchr(tri_from, src[i + 2]))) {
            c = tri_to[t - tri_from];
            i += 2;
        }
        tmp[n++] = (ch){c, i >= user_from && i < user_to};
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (tmp[i].c == '\\' && i + 1 < n && tmp[i + 1].c == '\n') {
            i++;
            continue;
        }
        out[m++] = tmp[i];
    }
    return m;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size == 0 || size > 2000) return 0;
    int statements = data[0] & 1;
    char *text = fuzz_text(data + 1, size - 1), why[160];
    /* gp__vector_safe (any text: it reads within it) passes nothing but names, numbers,
     * operators, parentheses, commas and blanks, and no comment. */
    if (gp__vector_safe(text, data[0] & 2)) {
        FUZZ_REQUIRE(strspn(text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_."
                                  "+-*/<>=!?:(), \t\r\n") == strlen(text));
        FUZZ_REQUIRE(!strstr(text, "//") && !strstr(text, "/*"));
    }
    if (!gp__check_user_code(text, statements, why, sizeof why)) {
        FUZZ_REQUIRE(why[0] != '\0');
        free(text);
        return 0;
    }
    /* As the generators place it: inside a function body (depth 1) and, for an expression,
     * inside "( ... )", on lines of its own. */
    char src[4096];
    snprintf(src, sizeof src, "void f(void)\n{\n    r = (\n%s\n    ); GP_MARKER;\n}\n", text);
    size_t from = strlen("void f(void)\n{\n    r = (\n"), to = from + strlen(text);
    ch t[8192];
    size_t n = translate(src, from, to, t);

    enum { CODE, LINE_COMMENT, BLOCK_COMMENT, STRING, CHAR } state = CODE;
    int depth = 0, line_start = 1, marker_ok = 0;
    for (size_t i = 0; i < n; i++) {
        char c = t[i].c, next = i + 1 < n ? t[i + 1].c : '\0';
        if (state == CODE) {
            int open = c == '(' || c == '[' || c == '{' || (c == '<' && (next == '%' || next == ':'));
            int close = c == ')' || c == ']' || c == '}' || (c == '%' && next == '>') || (c == ':' && next == '>');
            int hash = c == '#' || (c == '%' && next == ':');
            if (t[i].user) FUZZ_REQUIRE(!(hash && line_start)); /* no preprocessor line of the user's */
            if (c == '/' && next == '/') state = LINE_COMMENT, i++;
            else if (c == '/' && next == '*') state = BLOCK_COMMENT, i++;
            else if (c == '"') state = STRING;
            else if (c == '\'') state = CHAR;
            else if (open) depth++, i += c == '<';
            else if (close) depth--, i += c != ')' && c != ']' && c != '}';
            if (t[i].user) FUZZ_REQUIRE(depth >= 1); /* never out of the function body */
            if (!t[i].user && c == 'G' && i + 9 < n) {
                char word[10];
                for (int k = 0; k < 9; k++) word[k] = t[i + (size_t)k].c;
                word[9] = '\0';
                if (strcmp(word, "GP_MARKER") == 0) marker_ok = depth == 1;
            }
            if (c == '\n') line_start = 1;
            else if (c != ' ' && c != '\t') line_start = 0;
        } else if (state == LINE_COMMENT) {
            if (c == '\n') state = CODE, line_start = 1;
        } else if (state == BLOCK_COMMENT) {
            if (c == '*' && next == '/') state = CODE, i++;
        } else if (c == '\\') {
            i++;
        } else if ((state == STRING && c == '"') || (state == CHAR && c == '\'')) {
            state = CODE;
        }
    }
    FUZZ_REQUIRE(marker_ok);
    FUZZ_REQUIRE(state == CODE && depth == 0);
    free(text);
    return 0;
}
