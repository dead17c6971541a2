/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The "re:" match patterns (src/policy/regex.c): POSIX extended syntax read as glibc reads it,
 * matched by PCRE2 within budgets. Checked against glibc's regcomp()/regexec() on generated
 * patterns small enough for glibc; the patterns that made glibc allocate gigabytes or take
 * minutes are refused, or matched, at once; a profile holding one is a configuration error
 * naming the file and line. */
#include <errno.h>
#include <regex.h>
#include <stdint.h>
#include <time.h>

#include "policy/regex.h"
#include "policy-test.h"
#include "tap.h"

static double now(void) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double) t.tv_sec + (double) t.tv_nsec / 1e9;
}

static int match(const char *re, const char *s) {
        char msg[REGEX_MSG_SIZE];
        return regex_match(re, strlen(re), s, strlen(s), msg);
}

static void test_ordinary(void) {
        static const struct {
                const char *re, *s;
                int want;
        } cases[] = {
                { "pip3?", "pip", 1 },
                { "pip3?", "pip3", 1 },
                { "pip3?", "pip33", 0 },
                { "pip3?", "xpip", 0 },                 /* whole match: anchored at the start */
                { "pip", "pipx", 0 },                   /* and at the end */
                { "python3\\.[0-9]+", "python3.11", 1 },
                { "python3\\.[0-9]+", "python3x11", 0 },
                { "g(cc|\\+\\+)(-[0-9]{1,2})?", "g++-12", 1 },
                { "g(cc|\\+\\+)(-[0-9]{1,2})?", "gcc-123", 0 },
                { "[[:alpha:]_-]+", "clang-format", 1 },
                { "[]a]+", "]a]", 1 },                  /* ']' first is a character */
                { "[^]a]+", "bcd", 1 },
                { "[a\\]+", "a\\a", 1 },                /* '\' in a bracket is a character */
                { "[a-]+", "a-a", 1 },
                { "[[.-.]a]+", "-a", 1 },
                { "[[=a=]]", "a", 1 },
                { "a{,2}", "aa", 1 },                   /* glibc's {,n} */
                { "a{,2}", "aaa", 0 },
                { "a{2,}", "aaaa", 1 },
                { "a+*", "aaa", 1 },                    /* stacked: (a+)* */
                { "a*?", "aaa", 1 },                    /* (a*)?, not a lazy a* */
                { "a++b", "aab", 1 },                   /* (a+)+, not possessive: same answer */
                { "(a|ab)(c|bcd)(d*)", "abcd", 1 },
                { ".*", "anything", 1 },
                { "a.c", "a\nc", 1 },                   /* '.' takes a newline in POSIX */
                { "abc$", "abc\n", 0 },                 /* '$' is the very end */
                { "\\<x\\>-\\w+", "x-y1", 1 },
                { "\\(x\\)", "(x)", 1 },
                { "x}", "x}", 1 },
                { "a|b", "b", 1 },
                { "(|a)b", "b", 1 },
                { "\\Qa", "Qa", 1 },                    /* no PCRE2 syntax comes through */
                { "(?:a)", "a", -EINVAL },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char shown[64];
                size_t n = 0;
                for (const char *c = cases[i].s; *c && n + 3 < sizeof(shown); c++)
                        n += (size_t) snprintf(shown + n, sizeof(shown) - n, *c == '\n' ? "\\n" : "%c", *c);
                shown[n] = 0;
                int r = match(cases[i].re, cases[i].s);
                TAP_CHECK(r == cases[i].want, "'%s' against '%s': %d (want %d)", cases[i].re, shown, r,
                          cases[i].want);
        }
}

static void test_refused(void) {
        static const struct {
                const char *re, *why;
                int error;
        } cases[] = {
                { "a\\1", "back-reference", -EINVAL },
                { "(a)\\1", "back-reference", -EINVAL },
                { "a)|(b", "')' without its '('", -EINVAL }, /* would undo the anchors */
                { "(a", "'(' without its ')'", -EINVAL },
                { "[a", "'[' without its ']'", -EINVAL },
                { "[[:alpha:]", "'[' without its ']'", -EINVAL },
                { "[[:word:]]", "unknown character class", -EINVAL },
                { "[[.ab.]]", "not one character", -EINVAL },
                { "[z-a]", "range", -EINVAL },
                { "[a-c-e]", "'-'", -EINVAL },
                { "*a", "repetition of nothing", -EINVAL },
                { "a|+b", "repetition of nothing", -EINVAL },
                { "^*", "repetition of an anchor", -EINVAL },
                { "a{2,1}", "bad count", -EINVAL },
                { "a{1\\,2}", "bad count", -EINVAL },
                { "a{}", "bad count", -EINVAL },
                { "a{32768}", "over 32767", -E2BIG },
                { "a\\", "'\\' at the end", -EINVAL },
                { "((((((((((((((((((((((((((((((((((a))))))))))))))))))))))))))))))))))", "nested",
                  -E2BIG },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char msg[REGEX_MSG_SIZE] = "";
                int r = regex_match(cases[i].re, strlen(cases[i].re), "a", 1, msg);
                TAP_CHECK(r == cases[i].error && strstr(msg, cases[i].why), "'%s' refused: %s", cases[i].re,
                          msg);
        }
        char msg[REGEX_MSG_SIZE];
        TAP_CHECK(regex_match("a\0b", 3, "a", 1, msg) == -E2BIG, "a pattern holding NUL is refused");
        char big[REGEX_MAX + 2];
        memset(big, 'a', sizeof big - 1);
        big[sizeof big - 1] = 0;
        TAP_CHECK(regex_match(big, REGEX_MAX + 1, "a", 1, msg) == -E2BIG,
                  "a pattern over %d bytes is refused", REGEX_MAX);
        TAP_CHECK(regex_match(big, REGEX_MAX, big, REGEX_MAX, msg) == 1, "one of %d bytes is not",
                  REGEX_MAX);
}

/* Each took glibc seconds to minutes, or gigabytes (issue 13): now an answer or a refusal, at
 * once and within 1 MiB. */
static void test_pathological(void) {
        char many_plus[128] = "pip3\\.[0-9]", name[300];
        memset(many_plus + strlen(many_plus), '+', 100);
        memset(name, 'a', 255);
        name[255] = 0;
        static const char *const refused[] = {
                "((a{1,255}){1,255}){1,255}",
                "((a{1,64}){1,64}){1,64}",
                "(((((a{0,32767}){0,32767}){0,32767}){0,32767}){0,32767}){0,32767}",
        };
        for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
                char msg[REGEX_MSG_SIZE] = "";
                double t = now();
                int r = regex_match(refused[i], strlen(refused[i]), "", 0, msg);
                t = now() - t;
                TAP_CHECK(r == -E2BIG && t < 2.0, "'%s' is too large (%s), refused in %.3f s", refused[i],
                          msg, t);
        }
        static const char *const answered[] = {
                "((a*)*){30}", "(((a?)?)?){37}", "(a?){4000}", "((a?)?b?){37}", "(a?\?){60}", "(|a|b|){42}",
                "a{0,150}",
        };
        const char *const subjects[] = { "", "ab", name };
        for (size_t i = 0; i < ELEMENTSOF(answered) + 1; i++) {
                const char *re = i < ELEMENTSOF(answered) ? answered[i] : many_plus;
                double worst = 0;
                bool ok = true;
                for (size_t j = 0; j < ELEMENTSOF(subjects); j++) {
                        char msg[REGEX_MSG_SIZE] = "";
                        double t = now();
                        int r = regex_match(re, strlen(re), subjects[j], strlen(subjects[j]), msg);
                        t = now() - t;
                        worst = t > worst ? t : worst;
                        /* an answer, or the step budget's refusal: never more memory */
                        if (!(r == 0 || r == 1 || r == -ERANGE)) {
                                printf("#   '%s' against %zu bytes: %d %s\n", re, strlen(subjects[j]), r,
                                       msg);
                                ok = false;
                        }
                }
                TAP_CHECK(ok && worst < 2.0, "'%.40s' answered within the budgets, the slowest in %.3f s",
                          re, worst);
        }
}

/* ---- Against glibc ---- */

static uint64_t rng = 0x9e3779b97f4a7c15u;

static unsigned pick(unsigned n) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return (unsigned) (rng % n);
}

/* A pattern of pieces from a small alphabet, with counts small enough for glibc. */
static void generate(char *out, size_t size) {
        static const char *const pieces[] = {
                "a", "b", "c", ".", "[ab]", "[^a]", "[a-c]", "[[:alpha:]]", "[[:space:]]", "[]a]", "[a-]",
                "\\w", "\\W", "\\s", "\\b", "\\B", "\\<", "\\>", "^", "$", "\\.", "-", " ", "\\(", "(", ")",
                ")", "|", "*", "+", "?", "{2}", "{0,1}", "{1,}", "{,2}", "}", "\\", "[", "\\1", "\n",
        };
        size_t n = 0, k = 1 + pick(8);
        out[0] = 0;
        for (size_t i = 0; i < k; i++) {
                const char *p = pieces[pick(ELEMENTSOF(pieces))];
                if (n + strlen(p) + 1 >= size)
                        break;
                memcpy(out + n, p, strlen(p) + 1);
                n += strlen(p);
        }
}

static void test_against_glibc(void) {
        static const char *const subjects[] = { "", "a", "b", "ab", "ba", "aab", "abc", "a b", "a-b", "a.b",
                                                "(a)", "]", "a\n", "\n", "cab", "bbb", "a a", "-", "a\tb" };
        unsigned compared = 0, refused_both = 0, refused_ours = 0, bad = 0;

        for (int i = 0; i < 20000; i++) {
                char re[64], anchored[80], msg[REGEX_MSG_SIZE];
                regex_t rx;
                generate(re, sizeof re);
                int ours = regex_match(re, strlen(re), "", 0, msg);
                (void) snprintf(anchored, sizeof anchored, "^(%s)$", re);
                bool glibc_ok = regcomp(&rx, anchored, REG_EXTENDED | REG_NOSUB) == 0;
                if (ours < 0) {
                        /* Refused only where glibc refuses too, or by a rule of ours. */
                        regex_t raw;
                        bool raw_ok = regcomp(&raw, re, REG_EXTENDED | REG_NOSUB) == 0;
                        if (raw_ok)
                                regfree(&raw);
                        if (raw_ok && !strstr(msg, "back-reference") && !strstr(msg, "without its '('")) {
                                if (bad++ < 10)
                                        printf("#   '%s' refused (%s), glibc takes it\n", re, msg);
                        }
                        raw_ok ? refused_ours++ : refused_both++;
                        if (glibc_ok)
                                regfree(&rx);
                        continue;
                }
                if (!glibc_ok) {
                        if (bad++ < 10)
                                printf("#   '%s' taken, glibc refuses it\n", re);
                        continue;
                }
                for (size_t j = 0; j < ELEMENTSOF(subjects); j++) {
                        /* glibc sometimes takes a newline for a line's end or start where
                         * POSIX (without REG_NEWLINE) and we do not: ".$." matches "a\n" */
                        if (strchr(subjects[j], '\n') && strpbrk(re, "^$"))
                                continue;
                        int g = regexec(&rx, subjects[j], 0, NULL, 0) == 0;
                        int o = regex_match(re, strlen(re), subjects[j], strlen(subjects[j]), msg);
                        if (g != o && bad++ < 10)
                                printf("#   '%s' against '%s': glibc %d, ours %d\n", re, subjects[j], g, o);
                        compared++;
                }
                regfree(&rx);
        }
        printf("# %u answers compared, %u patterns refused by both, %u by our rules only\n", compared,
               refused_both, refused_ours);
        TAP_CHECK(bad == 0 && compared > 50000,
                  "20000 generated patterns: the same answers as glibc (%u differ)", bad);
}

/* ---- In a profile ---- */

static void test_profiles(void) {
        Plan *p = NULL;
        char *err = NULL;

        pt_write("etc/config.toml",
                 "[x]\nunit.MemoryMax = \"1G\"\n\nmatch = [\"re:((a{1,255}){1,255}){1,255}\"]\n");
        double t = now();
        int r = pt_resolve("proj", ARGV("tool"), NULL, &p, &err);
        t = now() - t;
        TAP_CHECK(r < 0 && err && strstr(err, "config.toml:4: match: bad regular expression") && t < 2.0,
                  "a pattern over budget is an error naming file:line, in %.3f s (%s)", t, err ?: "");
        plan_free(p);
        free(err);

        /* scudo check on an untrusted project file, as the fuzzer found it */
        pt_write("etc/config.toml", "");
        pt_write("proj/.scudo.toml", "[x]\nmatch = [\"re:pip3\\\\.[0-9]++++++++++++++++++++++++++++++++\",\n"
                                     "         \"re:a)|(b\"]\n");
        Request req;
        char *report = NULL;
        int errors = -1;
        pt_request(&req, "proj", ARGV("tool"), NULL);
        err = NULL;
        t = now();
        r = policy_check(&req, NULL, &report, &errors, &err);
        t = now() - t;
        TAP_CHECK(r >= 0 && errors == 1 && report &&
                          strstr(report, ".scudo.toml:3: match: bad regular expression") &&
                          strstr(report, "')' without its '('") && t < 2.0,
                  "scudo check: the stacked '+' are fine, the stray ')' an error at file:line, in %.3f s",
                  t);
        if (!(r >= 0 && errors == 1))
                printf("# %s\n", report ?: err);
        free(report);
        free(err);
        request_done(&req);
        unlink(pt_path("proj/.scudo.toml"));

        /* an ordinary pattern still selects its profile */
        pt_write("etc/config.toml",
                 "[x]\nmatch = [\"re:python3(\\\\.[0-9]+)?\"]\nunit.MemoryMax = \"1G\"\n");
        p = NULL;
        err = NULL;
        r = pt_resolve("proj", ARGV("python3.11"), NULL, &p, &err);
        TAP_CHECK(r >= 0 && pt_property(p, "MemoryMax") && strcmp(pt_property(p, "MemoryMax"), "1G") == 0,
                  "re:python3(\\.[0-9]+)? selects python3.11 (%s)", err ?: "");
        plan_free(p);
        free(err);
        p = NULL;
        err = NULL;
        r = pt_resolve("proj", ARGV("python3.11x"), NULL, &p, &err);
        TAP_CHECK(r >= 0 && !pt_property(p, "MemoryMax"), "but not python3.11x");
        plan_free(p);
        free(err);

        /* a match over the step budget for this command ends the run, naming the pattern */
        pt_write("etc/config.toml", "[x]\nmatch = [\"re:(((a?)?)?){37}\"]\nunit.MemoryMax = \"1G\"\n");
        p = NULL;
        err = NULL;
        char name[64];
        memset(name, 'a', 60);
        name[60] = 0;
        r = pt_resolve("proj", ARGV(name), NULL, &p, &err);
        TAP_CHECK(r < 0 && err && strstr(err, "config.toml:2: match: 're:(((a?)?)?){37}': takes more than"),
                  "a match over its step budget is an error naming file:line (%s)", err ?: "");
        plan_free(p);
        free(err);
}

int main(void) {
        pt_setup();
        test_ordinary();
        test_refused();
        test_pathological();
        test_against_glibc();
        test_profiles();
        pt_cleanup();
        return tap_done();
}
