/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* plan/unit-properties.c's writer over an sd-bus message. */
#include "unit/properties.h"

static int bus_open(void *userdata, char type, const char *contents) {
        return sd_bus_message_open_container(userdata, type, contents);
}

static int bus_close(void *userdata) {
        return sd_bus_message_close_container(userdata);
}

static int bus_appendv(void *userdata, const char *types, va_list ap) {
        return sd_bus_message_appendv(userdata, types, ap);
}

static int bus_append_strv(void *userdata, char **l) {
        return sd_bus_message_append_strv(userdata, l);
}

static PropertyWriter bus_writer(sd_bus_message *m) {
        return (PropertyWriter) {
                .open = bus_open,
                .close = bus_close,
                .appendv = bus_appendv,
                .append_strv = bus_append_strv,
                .userdata = m,
        };
}

int unit_property_append(sd_bus_message *m, const char *name, const char *value) {
        const PropertyWriter w = bus_writer(m);
        return unit_property_write(&w, name, value);
}

int unit_fixed_properties_append(sd_bus_message *m) {
        const PropertyWriter w = bus_writer(m);
        return unit_fixed_properties_write(&w);
}

int unit_property_open(sd_bus_message *m, const char *name, const char *sig) {
        const PropertyWriter w = bus_writer(m);
        return unit_property_write_open(&w, name, sig);
}

int unit_property_close(sd_bus_message *m) {
        const PropertyWriter w = bus_writer(m);
        return unit_property_write_close(&w);
}
