package io.homa.bench;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/** What results.json records about how a run was set up. */
class MachineInfoTest {
    @Test
    void settings_listTheHomaPropertiesInForce_andNoOthers() {
        String name = "homa.bench.machineInfoTestProbe";
        System.setProperty(name, "42");
        try {
            @SuppressWarnings("unchecked")
            Map<String, Object> settings = (Map<String, Object>) MachineInfo.collect().get("settings");
            assertEquals("42", settings.get(name));
            assertFalse(settings.containsKey("java.version"), "only homa.* properties");
        } finally {
            System.clearProperty(name);
        }
        assertFalse(MachineInfo.settings().containsKey(name));
    }
}
