/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* A tool's configuration less its credentials (src/plan/config-filter.c), in the formats the
 * tools write: what holds a credential is gone from the copy, the rest is there as written. */
#include <string.h>

#include "tap.h"
#include "plan/config-filter.h"
#include "util/macro.h"

typedef struct Case {
        const char *name;
        ConfigFormat format;
        const char *text;
        const char *gone[3];    /* not in the copy */
        const char *kept[3];    /* in the copy */
} Case;

static const Case cases[] = {
        {"cabal's config (hackage password)",
         CONFIG_FORMAT_LINES,
         "repository hackage.haskell.org\n  url: http://hackage.haskell.org/\n  username: dev\n"
         "  password: hunter2pw\njobs: $ncpus\n",
         {"hunter2pw"},
         {"url: http://hackage.haskell.org/", "jobs: $ncpus"}},
        {"cargo's config.toml (registry token, proxy password)",
         CONFIG_FORMAT_LINES,
         "[registries.internal]\nindex = \"sparse+https://reg.example/\"\ntoken = \"cio0123456789abcdef\"\n"
         "[http]\nproxy = \"http://u:p4ssw0rd@proxy:3128\"\n[build]\njobs = 4\n",
         {"cio0123456789abcdef", "p4ssw0rd"},
         {"index = \"sparse+https://reg.example/\"", "jobs = 4"}},
        {"cargo's credentials.toml",
         CONFIG_FORMAT_LINES,
         "[registry]\ntoken = \"cio0123456789abcdef\"\n[registries.x]\ntoken = \"cioABCDEF0123456789\"\n",
         {"cio0123456789abcdef", "cioABCDEF0123456789"},
         {"[registry]"}},
        {"conda's .condarc (/t/<token>/ channel)",
         CONFIG_FORMAT_LINES,
         "channels:\n  - https://conda.anaconda.org/t/ab-0123456789abcdef/mychannel\n  - defaults\n",
         {"ab-0123456789abcdef"},
         {"- defaults", "channels:"}},
        {"go's env file (GOPROXY with user:token)",
         CONFIG_FORMAT_LINES,
         "GOPROXY=https://dev:tok3nvalue@proxy.example/\nGOFLAGS=-mod=mod\n",
         {"tok3nvalue"},
         {"GOFLAGS=-mod=mod"}},
        {"pip.conf (index URL with userinfo)",
         CONFIG_FORMAT_LINES,
         "[global]\nindex-url = https://dev:s3cretpw@pypi.example/simple\ntimeout = 60\n",
         {"s3cretpw"},
         {"timeout = 60", "[global]"}},
        {"gradle.properties",
         CONFIG_FORMAT_LINES,
         "org.gradle.jvmargs=-Xmx2g\nmavenUser=dev\nmavenPassword=hunter2pw\nsigning.password=abc123x\n",
         {"hunter2pw", "abc123x"},
         {"org.gradle.jvmargs=-Xmx2g"}},
        {"maven's settings.xml <servers>",
         CONFIG_FORMAT_LINES,
         "<settings>\n <servers>\n  <server>\n   <id>internal</id>\n   <username>dev</username>\n"
         "   <password>hunter2pw</password>\n  </server>\n </servers>\n</settings>\n",
         {"hunter2pw"},
         {"<id>internal</id>", "</settings>"}},
        {"sbt's global.sbt (Credentials(realm, host, user, password))",
         CONFIG_FORMAT_LINES,
         "resolvers += \"internal\" at \"https://nexus.example/repo\"\n"
         "credentials += Credentials(\"Sonatype Nexus Repository Manager\", \"nexus.example\", "
         "\"deploy\", \"sbtPw2024x\")\nThisBuild / scalaVersion := \"3.3.1\"\n",
         {"sbtPw2024x"},
         {"resolvers += \"internal\" at", "scalaVersion := \"3.3.1\""}},
        {"sbt's plugins/credentials.sbt, a Credentials over several lines",
         CONFIG_FORMAT_LINES,
         "credentials += Credentials(\n  \"Artifactory Realm\",\n  \"art.example\",\n  \"dev\",\n"
         "  \"sbtPw2024y\"\n)\naddSbtPlugin(\"com.example\" % \"x\" % \"1.0\")\n",
         {"sbtPw2024y"},
         {"addSbtPlugin(\"com.example\""}},
        {"sbt's and ivy's .credentials (a properties file)",
         CONFIG_FORMAT_LINES,
         "realm=Sonatype Nexus Repository Manager\nhost=nexus.example\nuser=deploy\npassword=sbtPw2024z\n",
         {"sbtPw2024z"},
         {"host=nexus.example"}},
        {"gem's credentials (YAML)",
         CONFIG_FORMAT_LINES,
         "---\n:rubygems_api_key: rubygems_0123456789abcdef0123456789abcdef0123456789abcdef\n",
         {"rubygems_0123456789abcdef"},
         {"---"}},
        {"~/.pypirc",
         CONFIG_FORMAT_LINES,
         "[distutils]\nindex-servers = pypi\n[pypi]\nusername = __token__\n"
         "password = pypi-AgEIcHlwaS5vcmcabc\n",
         {"pypi-AgEIcHlwaS5vcmcabc"},
         {"index-servers = pypi"}},
        {"~/.npmrc",
         CONFIG_FORMAT_LINES,
         "registry=https://registry.npmjs.org/\n"
         "//registry.npmjs.org/:_authToken=npm_0123456789abcdefABCDEF0123456789abcd\n",
         {"npm_0123456789abcdef"},
         {"registry=https://registry.npmjs.org/"}},
        {"docker's config.json auths",
         CONFIG_FORMAT_JSON,
         "{\"auths\": {\"ghcr.io\": {\"auth\": \"ZGV2OmRvY2tlclB3MjAyNA==\"}}, \"credsStore\": \"pass\"}",
         {"ZGV2OmRvY2tlclB3MjAyNA=="},
         {"credsStore"}},
        {"maven's settings-security.xml",
         CONFIG_FORMAT_LINES,
         "<settingsSecurity>\n  <master>{jSMOWnoPFgsHVpMvz5VrIt5kRbzGpI8u+9EF1iFQyJQ=}</master>\n"
         "</settingsSecurity>\n",
         {"jSMOWnoPFgsHVpMvz5VrIt5kRbzGpI8u"},
         {"<settingsSecurity>"}},
        {"NuGet.Config packageSourceCredentials",
         CONFIG_FORMAT_LINES,
         "<configuration>\n <packageSourceCredentials>\n  <feed>\n"
         "   <add key=\"Username\" value=\"dev\" />\n"
         "   <add key=\"ClearTextPassword\" value=\"nugetPw2024\" />\n  </feed>\n"
         " </packageSourceCredentials>\n"
         "</configuration>\n",
         {"nugetPw2024"},
         {"<configuration>"}},
        {"gh's hosts.yml",
         CONFIG_FORMAT_LINES,
         "github.com:\n    user: dev\n    oauth_token: gho_0123456789abcdefABCDEF0123456789abcd\n"
         "    git_protocol: https\n",
         {"gho_0123456789abcdef"},
         {"git_protocol: https"}},
        {"~/.netrc",
         CONFIG_FORMAT_LINES,
         "machine api.example.com\n  login dev\n  password netrcPw2024\n"
         "machine b.example login x password netrcPw2025\n",
         {"netrcPw2024", "netrcPw2025"},
         {"machine api.example.com"}},
        {"~/.git-credentials",
         CONFIG_FORMAT_LINES,
         "https://dev:gitCredPw2024@github.com\n",
         {"gitCredPw2024"},
         {}},
        {"a YAML section named as a secret",
         CONFIG_FORMAT_LINES,
         "registry: https://r.example\ncredentials:\n  user: dev\n  key: abcdef\nretries: 3\n",
         {"abcdef", "user: dev"},
         {"retries: 3", "registry: https://r.example"}},
        {"an INI section named as a secret",
         CONFIG_FORMAT_LINES,
         "[core]\nx = 1\n[credentials]\nuser = dev\nkey = abcdef\n[other]\ny = 2\n",
         {"abcdef", "user = dev"},
         {"x = 1", "y = 2"}},
        {"composer's config.json (github-oauth, http-basic)",
         CONFIG_FORMAT_JSON,
         "{\"config\": {\"github-oauth\": {\"github.com\": \"0123456789abcdef0123456789abcdef01234567\"},"
         " \"http-basic\": {\"repo.example.org\": {\"username\": \"dev\", \"password\": \"hunter2pw\"}},"
         " \"process-timeout\": 600}}\n",
         {"0123456789abcdef0123456789abcdef01234567", "hunter2pw", "github-oauth"},
         {"\"process-timeout\": 600", "\"username\": \"dev\""}},
        {"composer's auth.json",
         CONFIG_FORMAT_JSON,
         "{\"bearer\": {\"repo.example.org\": \"abcdef0123\"}, \"gitlab-token\": {\"gitlab.com\": "
         "\"glpat-x\"}}",
         {"glpat-x"},
         {"{"}},
        {"a JSON array of URLs",
         CONFIG_FORMAT_JSON,
         "{\"mirrors\": [\"https://u:p4ssw0rd@m.example/\", \"https://m2.example/\"]}",
         {"p4ssw0rd"},
         {"https://m2.example/"}},
        {"text that is not JSON", CONFIG_FORMAT_JSON, "{\"token\": ", {"token"}, {"{}"}},
};

int main(void) {
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const Case *c = &cases[i];
                ConfigFiltered f = {};
                int r = config_filter(c->text, strlen(c->text), c->format, &f);
                TAP_CHECK(r == 0 && f.text && f.text[f.len] == 0, "%s: filtered", c->name);
                if (r < 0 || !f.text)
                        continue;
                TAP_CHECK(f.removed > 0, "%s: something removed", c->name);
                for (size_t g = 0; g < 3 && c->gone[g]; g++)
                        TAP_CHECK(!strstr(f.text, c->gone[g]), "%s: '%s' is gone", c->name, c->gone[g]);
                for (size_t k = 0; k < 3 && c->kept[k]; k++)
                        TAP_CHECK(strstr(f.text, c->kept[k]), "%s: '%s' is kept", c->name, c->kept[k]);
                config_filtered_done(&f);
        }

        ConfigFiltered f = {};
        const char *plain = "[build]\njobs = 4\ntarget-dir = \"/home/dev/target\"\n";
        TAP_CHECK(config_filter(plain, strlen(plain), CONFIG_FORMAT_LINES, &f) == 0 && f.removed == 0 &&
                  streq(f.text, plain), "a configuration without credentials is kept as it is");
        config_filtered_done(&f);
        TAP_CHECK(config_format_of("/home/dev/.composer/config.json") == CONFIG_FORMAT_JSON &&
                  config_format_of("/home/dev/.cargo/config.toml") == CONFIG_FORMAT_LINES,
                  "the format is the name's");
        return tap_done();
}
