package io.homa.internal.transport;

import io.homa.HomaConfig;
import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The shell reads the API's transport preference by name: the names and the property stay the API's. */
@org.junit.jupiter.api.extension.ExtendWith(io.homa.LeakCheck.class)
class TransportPreferencesTest {
    @Test
    void thePreferencesTheShellKnows_areTheApisIoTransports() {
        assertEquals(Arrays.stream(HomaConfig.IoTransport.values()).map(Enum::name).toList(), Transport.PREFERENCES);
        assertEquals(HomaConfig.IO_TRANSPORT_PROPERTY, Transport.PROPERTY);
    }
}
