package io.tierlog.ingest.function;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The ingest function is one small jar started cold by Lambda: it appends through the storage libraries it ships
 * (ingest, log) and must not pull in the index-service's RocksDB or Quarkus. Checked over every io.tierlog class on
 * its class path, which is what its shaded jar packs.
 */
@AnalyzeClasses(packages = "io.tierlog", importOptions = ImportOption.DoNotIncludeTests.class)
class LayeringTest {
    @ArchTest
    static final ArchRule noRocksDbNorQuarkus = noClasses().that().resideInAPackage("io.tierlog..")
            .should().dependOnClassesThat().resideInAnyPackage("org.rocksdb..", "io.quarkus..");

    @ArchTest
    static final ArchRule functionDoesNotUseTheService = noClasses().that().resideInAPackage("io.tierlog.ingest.function..")
            .should().dependOnClassesThat().resideInAnyPackage("io.tierlog.service..", "io.tierlog.index..");
}
