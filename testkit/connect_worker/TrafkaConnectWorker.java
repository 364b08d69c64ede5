/*
 * A Kafka Connect distributed worker without Connect's Jetty REST server, for trafka's compat tests
 * (testkit/connect.py compiles and starts it; docs/connect.md says why).
 *
 * It builds the DistributedHerder the way Connect 4.3's ConnectDistributed does (Plugins, the three
 * Kafka backing stores, Worker, herder), and serves the few routes the tests and the other workers
 * need with the JDK's HTTP server, bound to 127.0.0.1:
 *
 *   PUT    /connectors/{name}/config   create or update a connector (forwarded to the leader)
 *   GET    /connectors/{name}/status   the connector's and its tasks' states and workers
 *   DELETE /connectors/{name}          delete it (forwarded to the leader)
 *   GET    /connectors                 the connectors' names
 *   POST   /connectors/{name}/tasks    internal: a follower's new task configs for the leader
 *   PUT    /connectors/{name}/fence    internal: zero-downtime fencing of a source connector's zombies
 *
 * The internal routes check the request signature the way Connect's own resource does.
 * Usage: java TrafkaConnectWorker worker.properties; prints "listening on <url>" once serving, and
 * stops (as on SIGTERM) when its stdin closes.
 */

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.connect.connector.policy.ConnectorClientConfigOverridePolicy;
import org.apache.kafka.connect.errors.NotFoundException;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.runtime.Worker;
import org.apache.kafka.connect.runtime.WorkerConfig;
import org.apache.kafka.connect.runtime.distributed.DistributedConfig;
import org.apache.kafka.connect.runtime.distributed.DistributedHerder;
import org.apache.kafka.connect.runtime.distributed.NotLeaderException;
import org.apache.kafka.connect.runtime.isolation.Plugins;
import org.apache.kafka.connect.runtime.rest.InternalRequestSignature;
import org.apache.kafka.connect.runtime.rest.RestClient;
import org.apache.kafka.connect.runtime.rest.errors.ConnectRestException;
import org.apache.kafka.connect.storage.Converter;
import org.apache.kafka.connect.storage.KafkaConfigBackingStore;
import org.apache.kafka.connect.storage.KafkaOffsetBackingStore;
import org.apache.kafka.connect.storage.KafkaStatusBackingStore;
import org.apache.kafka.connect.util.ConnectUtils;
import org.apache.kafka.connect.util.FutureCallback;
import org.apache.kafka.connect.util.SharedTopicAdmin;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import javax.crypto.Mac;

public final class TrafkaConnectWorker {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long REQUEST_TIMEOUT_MS = 30_000;

    private final DistributedHerder herder;
    private final HttpClient forwarder = HttpClient.newHttpClient();

    private TrafkaConnectWorker(DistributedHerder herder) {
        this.herder = herder;
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> props = Utils.propsToStringMap(Utils.loadProps(args[0]));
        HttpServer http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        String url = "http://127.0.0.1:" + http.getAddress().getPort() + "/";

        Plugins plugins = new Plugins(props);
        plugins.compareAndSwapWithDelegatingLoader();
        DistributedConfig config = new DistributedConfig(props);
        String clusterId = config.kafkaClusterId();
        String clientIdBase = ConnectUtils.clientIdBase(config);
        String workerId = "127.0.0.1:" + http.getAddress().getPort();
        ConnectorClientConfigOverridePolicy policy = plugins.newPlugin(
                config.getString(WorkerConfig.CONNECTOR_CLIENT_POLICY_CLASS_CONFIG), config,
                ConnectorClientConfigOverridePolicy.class);

        Map<String, Object> adminProps = new HashMap<>(config.originals());
        ConnectUtils.addMetricsContextProperties(adminProps, config, clusterId);
        adminProps.put("client.id", clientIdBase + "shared-admin");
        SharedTopicAdmin sharedAdmin = new SharedTopicAdmin(adminProps);

        Converter offsetKeys = plugins.newInternalConverter(true, JsonConverter.class.getName(), Map.of("schemas.enable", "false"));
        KafkaOffsetBackingStore offsets = new KafkaOffsetBackingStore(sharedAdmin, () -> clientIdBase, offsetKeys);
        offsets.configure(config);
        Worker worker = new Worker(workerId, Time.SYSTEM, plugins, config, offsets, policy);
        Converter internal = worker.getInternalValueConverter();
        KafkaStatusBackingStore statuses = new KafkaStatusBackingStore(Time.SYSTEM, internal, sharedAdmin, clientIdBase);
        statuses.configure(config);
        KafkaConfigBackingStore configs = new KafkaConfigBackingStore(internal, config, worker.configTransformer(), sharedAdmin, clientIdBase);
        DistributedHerder herder = new DistributedHerder(config, Time.SYSTEM, worker, clusterId, statuses, configs, url,
                new RestClient(config), policy, List.of(), sharedAdmin);

        TrafkaConnectWorker routes = new TrafkaConnectWorker(herder);
        http.createContext("/", routes::handle);
        // A request may wait on the herder for seconds; the others (a follower's call) must not wait behind it.
        http.setExecutor(Executors.newCachedThreadPool());
        http.start();
        herder.start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            herder.stop();
            http.stop(0);
        }, "trafka-connect-shutdown"));
        System.out.println("listening on " + url);
        System.out.flush();
        Thread stdin = new Thread(() -> {
            // The test holds our stdin: when it closes (the test process died), stop like on SIGTERM.
            try {
                System.in.transferTo(java.io.OutputStream.nullOutputStream());
            } catch (IOException e) {
                // closed all the same
            }
            System.exit(0);
        }, "trafka-connect-stdin");
        stdin.setDaemon(true);
        stdin.start();
        try {
            herder.herderTask().get();
        } catch (ExecutionException e) {
            // The herder's thread died (Connect logs why): a worker that cannot work exits.
            Runtime.getRuntime().halt(2);
        }
    }

    private void handle(HttpExchange exchange) throws IOException {
        String method = exchange.getRequestMethod();
        String[] path = exchange.getRequestURI().getPath().replaceAll("^/+|/+$", "").split("/");
        byte[] body = exchange.getRequestBody().readAllBytes();
        int status = 200;
        Object answer;
        try {
            answer = route(exchange, method, path, body);
        } catch (NotLeaderException e) {
            forward(exchange, e.forwardUrl(), method, body);
            return;
        } catch (ConnectRestException e) {
            status = e.statusCode();
            answer = Map.of("error_code", e.errorCode(), "message", String.valueOf(e.getMessage()));
        } catch (NotFoundException e) {
            status = 404;
            answer = Map.of("error_code", 404, "message", String.valueOf(e.getMessage()));
        } catch (Exception e) {
            status = 500;
            answer = Map.of("error_code", 500, "message", String.valueOf(e));
        }
        if (path.length == 3 && (path[2].equals("tasks") || path[2].equals("fence"))) {
            // Worker-to-leader calls, in the worker's log for the tests to see.
            System.err.println("TrafkaConnectWorker: internal request " + method + " " + exchange.getRequestURI().getPath()
                    + " answered " + (answer == null ? 204 : status));
        }
        byte[] out = answer == null ? new byte[0] : JSON.writeValueAsBytes(answer);
        exchange.getResponseHeaders().add("Content-Type", "application/json");
        exchange.sendResponseHeaders(answer == null ? 204 : status, answer == null ? -1 : out.length);
        if (answer != null) {
            exchange.getResponseBody().write(out);
        }
        exchange.close();
    }

    private Object route(HttpExchange exchange, String method, String[] path, byte[] body) throws Exception {
        if (path.length == 1 && path[0].equals("connectors") && method.equals("GET")) {
            FutureCallback<java.util.Collection<String>> cb = new FutureCallback<>();
            herder.connectors(cb);
            return await(cb);
        }
        if (path.length < 2 || !path[0].equals("connectors")) {
            throw new ConnectRestException(404, "no route " + method + " " + String.join("/", path));
        }
        String name = path[1];
        String action = path.length > 2 ? path[2] : "";
        switch (method + " " + action) {
            case "PUT config": {
                Map<String, String> config = new HashMap<>(JSON.readValue(body, new TypeReference<Map<String, String>>() { }));
                config.put("name", name);
                FutureCallback<Object> cb = new FutureCallback<>();
                herder.putConnectorConfig(name, config, true, (error, created) -> cb.onCompletion(error, created));
                await(cb);
                return Map.of("name", name);
            }
            case "GET status":
                return herder.connectorStatus(name);
            case "DELETE ": {
                FutureCallback<Object> cb = new FutureCallback<>();
                herder.deleteConnectorConfig(name, (error, deleted) -> cb.onCompletion(error, deleted));
                await(cb);
                return null;
            }
            case "POST tasks": {
                List<Map<String, String>> tasks = JSON.readValue(body, new TypeReference<List<Map<String, String>>>() { });
                FutureCallback<Void> cb = new FutureCallback<>();
                herder.putTaskConfigs(name, tasks, cb, signature(exchange, body));
                await(cb);
                return null;
            }
            case "PUT fence": {
                FutureCallback<Void> cb = new FutureCallback<>();
                herder.fenceZombieSourceTasks(name, cb, signature(exchange, body));
                await(cb);
                return null;
            }
            default:
                throw new ConnectRestException(404, "no route " + method + " " + String.join("/", path));
        }
    }

    /** The signature a worker puts on its requests to the leader (null when it sent none). */
    private static InternalRequestSignature signature(HttpExchange exchange, byte[] body) throws Exception {
        String signature = exchange.getRequestHeaders().getFirst(InternalRequestSignature.SIGNATURE_HEADER);
        String algorithm = exchange.getRequestHeaders().getFirst(InternalRequestSignature.SIGNATURE_ALGORITHM_HEADER);
        if (signature == null || algorithm == null) {
            return null;
        }
        return new InternalRequestSignature(body, Mac.getInstance(algorithm), Base64.getDecoder().decode(signature));
    }

    private static <T> T await(FutureCallback<T> cb) throws Exception {
        try {
            return cb.get(REQUEST_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
        } catch (TimeoutException e) {
            throw new ConnectRestException(504, "the herder did not answer within " + REQUEST_TIMEOUT_MS + " ms");
        }
    }

    /** What Connect's REST server does when this worker is not the leader: ask the leader. */
    private void forward(HttpExchange exchange, String leaderUrl, String method, byte[] body) throws IOException {
        URI target = URI.create(leaderUrl.replaceAll("/+$", "") + exchange.getRequestURI().getPath());
        HttpRequest.Builder request = HttpRequest.newBuilder(target).header("Content-Type", "application/json")
                .method(method, body.length == 0 ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
        byte[] out;
        int status;
        try {
            HttpResponse<byte[]> response = forwarder.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
            status = response.statusCode();
            out = response.body();
        } catch (InterruptedException | IOException e) {
            status = 502;
            out = JSON.writeValueAsBytes(Map.of("error_code", 502, "message", "forwarding to " + target + ": " + e));
        }
        exchange.sendResponseHeaders(status, out.length == 0 ? -1 : out.length);
        if (out.length > 0) {
            exchange.getResponseBody().write(out);
        }
        exchange.close();
    }
}
