package io.homa.examples;

import io.homa.HomaConfig;
import io.homa.HomaSocket;
import java.net.InetSocketAddress;
import static java.nio.charset.StandardCharsets.UTF_8;

public class Echo {
    public static void main(String[] args) throws Exception {
        HomaConfig config = HomaConfig.builder().bindAddress(new InetSocketAddress("127.0.0.1", 0)).build();
        try (HomaSocket server = HomaSocket.open(config); HomaSocket client = HomaSocket.open(config)) {
            server.serve(request -> request.reply(request.toByteArray()));
            byte[] reply = client.call(server.localAddress(), "hello, Homa".getBytes(UTF_8)).get();
            System.out.println(new String(reply, UTF_8));
        }
    }
}
