package io.tierlog.service;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaConstructorCall;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.core.importer.Location;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The layering of the modules (docs/architecture.md, "Modules"), checked on every {@code mvn verify}. This module's
 * test class path holds every storage library and the service, so the rules that relate them live here; the ingest
 * function's own rules are in its module's LayeringTest. Test classes are left out: a test may reach further.
 */
@AnalyzeClasses(packages = "io.tierlog", importOptions = {ImportOption.DoNotIncludeTests.class,
        LayeringTest.DoNotIncludeTestJars.class})
class LayeringTest {
    /** Test fixtures another module exports as a test jar (the ingest function's harness) are test classes too. */
    static final class DoNotIncludeTestJars implements ImportOption {
        @Override
        public boolean includes(Location location) {
            return !location.contains("-tests.jar");
        }
    }

    /**
     * The packages of the plain libraries under storage/. A new storage module adds its package here; the
     * deployables (io.tierlog.service, io.tierlog.ingest.function) are not storage. A rule whose classes are missing
 * fails (ArchUnit's failOnEmptyShould), so a renamed package cannot make a rule pass vacuously.
     */
    static final String[] STORAGE = {
            "io.tierlog.log..", "io.tierlog.ingest", "io.tierlog.index..", "io.tierlog.tiering..",
            "io.tierlog.objectstore..", "io.tierlog.testkit..", "io.tierlog.sharegroups..", "io.tierlog.groups..",
            "io.tierlog.access.."};

    /**
     * Storage is a library the deployables use, so it cannot know about them, the HTTP stack they run, or the HTTP
     * contract (io.tierlog.http: problem types, statuses, media types, the JSON produce body).
     */
    @ArchTest
    static final ArchRule storageKnowsNoServiceNorHttpStack = noClasses().that().resideInAnyPackage(STORAGE)
            .should().dependOnClassesThat().resideInAnyPackage(
                    "io.tierlog.service..", "io.tierlog.ingest.function..", "io.tierlog.http..",
                    "io.quarkus..", "jakarta.ws..", "io.vertx..");

    /** The object-store SPI is what a cloud adapter implements; only the adapter (objectstore.s3) may use a cloud SDK. */
    @ArchTest
    static final ArchRule objectStoreSpiHasNoCloudSdk = noClasses().that().resideInAPackage("io.tierlog.objectstore")
            .should().dependOnClassesThat().resideInAnyPackage("software.amazon..", "com.amazonaws..");

    /**
     * The hot log has one owner (docs/architecture.md, "Modules"): outside storage/log, everything goes through its
     * public face ({@code HotLog}, {@code PartitionWriter}, {@code PartitionReader} and their results); segment
     * files, cursors, group commit and producer state are its {@code internal} packages.
     */
    @ArchTest
    static final ArchRule hotLogInternalsStayInTheLog = noClasses().that().resideOutsideOfPackage("io.tierlog.log..")
            .should().dependOnClassesThat().resideInAPackage("io.tierlog.log.internal..");

    /**
     * Writers and readers of a partition are opened through the {@code HotLog} facade (their constructors are
     * package-private), so that the hot directory has one owner to ask; this rule says so where the compiler cannot
     * (reflection aside, it is the same check, kept beside the other layering rules).
     */
    @ArchTest
    static final ArchRule partitionWritersAndReadersAreOpenedByHotLog = noClasses().that()
            .resideOutsideOfPackage("io.tierlog.log")
            .should().callConstructorWhere(new DescribedPredicate<JavaConstructorCall>(
                    "the constructor of PartitionWriter or PartitionReader") {
                @Override
                public boolean test(JavaConstructorCall call) {
                    String owner = call.getTargetOwner().getName();
                    return owner.equals("io.tierlog.log.PartitionWriter") || owner.equals("io.tierlog.log.PartitionReader");
                }
            });

    /**
     * The service's packages by role (http plumbing, api edges, topics, read, groups, ops...) depend one way: no
     * package imports a package that imports it back, so each can be read, and changed, from the bottom up.
     */
    @ArchTest
    static final ArchRule servicePackagesHaveNoCycles = slices().matching("io.tierlog.service.(*)..")
            .should().beFreeOfCycles();

    /**
     * kafka-clients' {@code internals} packages change without notice between releases. Each deployable part touches
     * them through one adapter that says why: the Kafka listener's KafkaInternals (the classic consumer protocol has
     * no public form) and the log's KafkaClientInternals (the batch filter and decompressor take a BufferSupplier).
     */
    @ArchTest
    static final ArchRule kafkaInternalsOnlyThroughTheAdapters = noClasses().that().resideInAPackage("io.tierlog..")
            .and().haveNameNotMatching("io\\.tierlog\\.service\\.kafka\\.KafkaInternals(\\$.*)?")
            .and().doNotHaveFullyQualifiedName("io.tierlog.log.format.KafkaClientInternals")
            .should().dependOnClassesThat().resideInAnyPackage("org.apache.kafka..internals..");

    /**
     * Since Kafka 4 every record-batch class is internal ({@code record.internal}). The log's record format and its
     * cleaner read and write batches with them; the service only hands batches to the Kafka listener's message
     * classes, in KafkaInternals. Everything else sees stored batches as bytes.
     */
    @ArchTest
    static final ArchRule kafkaRecordClassesOnlyInTheLogFormat = noClasses().that().resideInAPackage("io.tierlog..")
            .and().resideOutsideOfPackages("io.tierlog.log.format..", "io.tierlog.log.compaction..")
            .and().haveNameNotMatching("io\\.tierlog\\.service\\.kafka\\.KafkaInternals(\\$.*)?")
            .should().dependOnClassesThat().resideInAnyPackage("org.apache.kafka..internal..");

    /**
     * Meters are registered in one place (io.tierlog.service.metrics, see {@code Meters}): elsewhere the service may
     * increment a meter handed to it, but never sees the registry, a meter builder, the global registry or the
     * meter-creating annotations, so every meter name, unit and tag is written in that one package.
     */
    @ArchTest
    static final ArchRule metersAreRegisteredInOnePlace = noClasses().that().resideInAPackage("io.tierlog.service..")
            .and().resideOutsideOfPackage("io.tierlog.service.metrics..")
            .should().dependOnClassesThat(registerMeters());

    static DescribedPredicate<JavaClass> registerMeters() {
        return new DescribedPredicate<>("register Micrometer meters (MeterRegistry, Metrics, *.Builder, annotations)") {
            @Override
            public boolean test(JavaClass c) {
                String name = c.getName();
                return name.startsWith("io.micrometer.") && (c.isAssignableTo("io.micrometer.core.instrument.MeterRegistry")
                        || name.equals("io.micrometer.core.instrument.Metrics")
                        || name.endsWith("$Builder") || name.startsWith("io.micrometer.core.annotation.")
                        || c.isAssignableTo("io.micrometer.core.instrument.binder.MeterBinder"));
            }
        };
    }

    /**
     * A package named {@code internal} belongs to the module whose package encloses it
     * ({@code io.tierlog.log.internal.segment} to {@code io.tierlog.log}); only that module's classes may use it.
     */
    @ArchTest
    static final ArchRule internalsStayInTheirModule = classes().should(useOnlyTheirOwnInternals());

    static ArchCondition<JavaClass> useOnlyTheirOwnInternals() {
        return new ArchCondition<>("use no other module's ..internal.. packages") {
            @Override
            public void check(JavaClass origin, ConditionEvents events) {
                for (Dependency d : origin.getDirectDependenciesFromSelf()) {
                    String target = d.getTargetClass().getPackageName();
                    String owner = internalOwner(target);
                    if (owner != null && !inModule(origin.getPackageName(), owner)) {
                        events.add(SimpleConditionEvent.violated(d, d.getDescription()
                                + " reaches into the internals of " + owner));
                    }
                }
            }
        };
    }

    /** The package that owns an {@code internal} package, or null if {@code pkg} is not an io.tierlog internal one. */
    static String internalOwner(String pkg) {
        if (!pkg.startsWith("io.tierlog.")) {
            return null;
        }
        int at = ("." + pkg + ".").indexOf(".internal.");
        return at < 0 ? null : pkg.substring(0, at - 1);
    }

    private static boolean inModule(String pkg, String module) {
        return pkg.equals(module) || pkg.startsWith(module + ".");
    }
}
