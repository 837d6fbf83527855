package io.homa.bench;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

    @Test
    void rmemMax_isRecordedWhereTheKernelTellsIt() {
        Long rmem = MachineInfo.rmemMax();
        Assumptions.assumeTrue(rmem != null, "no /proc/sys/net/core/rmem_max here (not Linux)");
        assertEquals(rmem, MachineInfo.collect().get("rmem_max"));
        assertTrue(rmem > 0);
    }
}
