package io.tierlog.ingest.function.harness;

import com.amazonaws.services.lambda.runtime.serialization.PojoSerializer;
import com.amazonaws.services.lambda.runtime.serialization.events.LambdaEventSerializers;

import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Loads the built Lambda artifact by its handler string ({@code class::method}) in a class loader whose parent is
 * the JDK's platform loader, so the handler sees only the JDK and what the jar carries (a class that minimization
 * dropped fails here), and invokes it with event JSON the way the runtime does: the event is deserialized with
 * Lambda's own event serializers against the jar's event classes, and the response serialized back to JSON.
 * One handler instance serves every call, as one execution environment does. Not thread-safe.
 */
public final class FreshArtifactHandler implements Closeable {
    private final URLClassLoader loader;
    private final Object handler;
    private final Method method;
    private final PojoSerializer<Object> eventSerializer;
    private final PojoSerializer<Object> responseSerializer;
    private final Class<?> contextType;

    @SuppressWarnings("unchecked")
    public FreshArtifactHandler(Path jar, String handlerString) throws ReflectiveOperationException, IOException {
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException(jar + " is missing: run `mvn package` (the ITs run after it)");
        }
        this.loader = new URLClassLoader(new URL[]{jar.toUri().toURL()}, ClassLoader.getPlatformClassLoader());
        String[] parts = handlerString.split("::", 2);
        Class<?> handlerClass = Class.forName(parts[0], true, loader);
        this.handler = handlerClass.getConstructor().newInstance();
        this.contextType = Class.forName("com.amazonaws.services.lambda.runtime.Context", false, loader);
        Method found = null;
        for (Method m : handlerClass.getMethods()) {
            if (m.getName().equals(parts[1]) && m.getParameterCount() == 2 && !m.isBridge()) {
                found = m;
            }
        }
        if (found == null) {
            throw new NoSuchMethodException(handlerString);
        }
        this.method = found;
        this.eventSerializer = LambdaEventSerializers.serializerFor((Class<Object>) method.getParameterTypes()[0], loader);
        this.responseSerializer = LambdaEventSerializers.serializerFor((Class<Object>) method.getReturnType(), loader);
    }

    public ClassLoader loader() {
        return loader;
    }

    public Object handler() {
        return handler;
    }

    /** Invokes the handler with one event; returns the serialized response JSON. */
    public String invoke(String eventJson, String awsRequestId) throws Throwable {
        Object event = eventSerializer.fromJson(eventJson);
        Object context = Proxy.newProxyInstance(loader, new Class<?>[]{contextType}, (proxy, m, args) -> switch (m.getName()) {
            case "getAwsRequestId" -> awsRequestId;
            case "getFunctionName" -> "tierlog-ingest";
            case "getRemainingTimeInMillis" -> 30_000;
            case "getMemoryLimitInMB" -> 1024;
            case "toString" -> "TestContext[" + awsRequestId + "]";
            case "hashCode" -> System.identityHashCode(proxy);
            case "equals" -> proxy == args[0];
            default -> null;
        });
        Object response;
        try {
            response = method.invoke(handler, event, context);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        responseSerializer.toJson(response, out);
        return out.toString(StandardCharsets.UTF_8);
    }

    @Override
    public void close() throws IOException {
        if (handler instanceof Closeable c) {
            c.close();
        }
        loader.close();
    }
}
