package io.tierlog.tiering;

import io.tierlog.objectstore.FilesystemObjectStore;
import io.tierlog.objectstore.ObjectStore;

/** The tiering contract over the embedded filesystem store. */
class FilesystemTieringTest extends TieredStorageContractTest {
    @Override
    protected ObjectStore openStore() {
        return new FilesystemObjectStore(tmp.resolve("cold"));
    }
}
