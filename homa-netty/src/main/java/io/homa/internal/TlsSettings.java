package io.homa.internal;

import javax.net.ssl.KeyManager;
import javax.net.ssl.TrustManager;
import java.time.Duration;

/**
 * The mutual-TLS mode's configuration, as the shell is told it (Internal use only).
 *
 * @param keyManager   presents this socket's certificate (as TLS server and as client)
 * @param trustManager judges the peer's certificate
 * @param rotateEvery  how often the socket's master key is replaced
 * @param pspVersion   the cipher of every packet (both peers must agree)
 *
 * <p>Internal use only.
 */
public record TlsSettings(KeyManager keyManager, TrustManager trustManager, Duration rotateEvery, int pspVersion) {
}
