/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <arpa/inet.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include "bpfd/resolv-conf.h"
#include "util/macro.h"

static int parse_server(const char *s, Nameserver *ret) {
        char buf[INET6_ADDRSTRLEN + IF_NAMESIZE + 2], *pct;
        struct in_addr a4;
        Nameserver n = {};

        if (strlen(s) >= sizeof(buf))
                return -EINVAL;
        strcpy(buf, s);

        n.addr.sin6_family = AF_INET6;
        n.addr.sin6_port = htons(53);
        if (inet_pton(AF_INET, buf, &a4) == 1) {
                n.addr.sin6_addr.s6_addr[10] = 0xff;
                n.addr.sin6_addr.s6_addr[11] = 0xff;
                memcpy(n.addr.sin6_addr.s6_addr + 12, &a4, 4);
        } else {
                /* fe80::1%eth0: the scope names the interface of a link-local server */
                pct = strchr(buf, '%');
                if (pct) {
                        *pct = 0;
                        n.addr.sin6_scope_id = if_nametoindex(pct + 1);
                        if (n.addr.sin6_scope_id == 0)
                                return -EINVAL;
                }
                if (inet_pton(AF_INET6, buf, &n.addr.sin6_addr) != 1)
                        return -EINVAL;
        }
        *ret = n;
        return 0;
}

int resolv_conf_parse(const char *text, Nameserver ret[RESOLV_CONF_MAX_SERVERS]) {
        int n = 0;

        for (const char *line = text; line && *line && n < RESOLV_CONF_MAX_SERVERS; ) {
                const char *eol = strchrnul(line, '\n'), *p = line;
                char word[INET6_ADDRSTRLEN + IF_NAMESIZE + 2];
                size_t l;

                while (*p == ' ' || *p == '\t')
                        p++;
                if ((p = startswith(p, "nameserver")) && (*p == ' ' || *p == '\t')) {
                        while (*p == ' ' || *p == '\t')
                                p++;
                        l = strcspn(p, " \t\r\n#;");
                        if (l > 0 && l < sizeof(word) && p + l <= eol) {
                                memcpy(word, p, l);
                                word[l] = 0;
                                if (parse_server(word, &ret[n]) >= 0)
                                        n++;
                        }
                }
                line = *eol ? eol + 1 : NULL;
        }
        return n;
}

int resolv_conf_load(const char *path, Nameserver ret[RESOLV_CONF_MAX_SERVERS]) {
        char buf[16384];
        FILE *f;
        size_t n;
        int k;

        f = fopen(path, "re");
        if (f) {
                n = fread(buf, 1, sizeof(buf) - 1, f);
                buf[n] = 0;
                fclose(f);
                k = resolv_conf_parse(buf, ret);
                if (k > 0)
                        return k;
        }
        (void) parse_server("127.0.0.1", &ret[0]);
        return 1;
}
