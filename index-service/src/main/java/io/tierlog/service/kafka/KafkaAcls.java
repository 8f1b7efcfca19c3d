package io.tierlog.service.kafka;

import io.tierlog.access.GrantStore.Grant;
import io.tierlog.access.Principal;
import io.tierlog.service.security.AccessControl;
import jakarta.inject.Singleton;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.message.CreateAclsRequestData;
import org.apache.kafka.common.message.CreateAclsResponseData;
import org.apache.kafka.common.message.DeleteAclsResponseData;
import org.apache.kafka.common.message.DescribeAclsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.CreateAclsRequest;
import org.apache.kafka.common.requests.CreateAclsResponse;
import org.apache.kafka.common.requests.DeleteAclsRequest;
import org.apache.kafka.common.requests.DeleteAclsResponse;
import org.apache.kafka.common.requests.DescribeAclsRequest;
import org.apache.kafka.common.requests.DescribeAclsResponse;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Kafka's ACL APIs (DescribeAcls, CreateAcls, DeleteAcls) over Tierlog's grants ({@link KafkaAclBindings} maps one to
 * the other; {@link AccessControl} stores them, durable and audited). Only {@code admin:cluster} reaches them
 * ({@link KafkaAccess}: Kafka's DESCRIBE and ALTER on the cluster). A grant adds to its principal's scopes on every
 * instance within the token refresh interval, and a deleted one stops working there as fast, on open connections
 * too. The ACLs listed are the grants made this way; a token's own scopes are its own ({@code GET /v1/tokens}).
 * Blocking (file writes on the shared volume): runs on a worker. Thread-safe.
 */
@Singleton
public class KafkaAcls {
    private final AccessControl access;

    public KafkaAcls(AccessControl access) {
        this.access = access;
    }

    /** Every grant's ACL that the filter matches, each once (a group's read and commit are one READ). */
    DescribeAclsResponse describe(DescribeAclsRequest request) {
        DescribeAclsResponseData out = new DescribeAclsResponseData();
        AclBindingFilter filter = request.filter();
        if (filter.isUnknown()) {
            return new DescribeAclsResponse(out.setErrorCode(Errors.INVALID_REQUEST.code())
                    .setErrorMessage("the filter has an unknown field: " + filter.findIndefiniteField()),
                    request.version());
        }
        Set<AclBinding> matching = new LinkedHashSet<>();
        for (Grant g : access.grants().list()) {
            AclBinding acl = KafkaAclBindings.binding(g);
            if (filter.matches(acl)) {
                matching.add(acl);
            }
        }
        return new DescribeAclsResponse(out.setResources(DescribeAclsResponse.aclsResources(matching)),
                request.version());
    }

    /** Each creation's grants, added durably before the answer; one that is no grant is refused with why. */
    CreateAclsResponse create(CreateAclsRequest request, Principal caller) {
        CreateAclsResponseData out = new CreateAclsResponseData();
        for (CreateAclsRequestData.AclCreation creation : request.data().creations()) {
            CreateAclsResponseData.AclCreationResult result = new CreateAclsResponseData.AclCreationResult();
            try {
                for (Grant g : KafkaAclBindings.grants(CreateAclsRequest.aclBinding(creation))) {
                    access.grant(g, caller);
                }
            } catch (KafkaAclBindings.NotAGrant | IllegalArgumentException e) {
                result.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage(e.getMessage());
            }
            out.results().add(result);
        }
        return new CreateAclsResponse(out);
    }

    /** Removes every grant each filter matches, durably before the answer, and lists the ACLs removed. */
    DeleteAclsResponse delete(DeleteAclsRequest request, Principal caller) {
        DeleteAclsResponseData out = new DeleteAclsResponseData();
        List<Grant> grants = access.grants().list();
        for (AclBindingFilter filter : request.filters()) {
            DeleteAclsResponseData.DeleteAclsFilterResult result = new DeleteAclsResponseData.DeleteAclsFilterResult();
            if (filter.isUnknown()) {
                out.filterResults().add(result.setErrorCode(Errors.INVALID_REQUEST.code())
                        .setErrorMessage("the filter has an unknown field: " + filter.findIndefiniteField()));
                continue;
            }
            Map<AclBinding, Boolean> removed = new LinkedHashMap<>();
            for (Grant g : grants) {
                AclBinding acl = KafkaAclBindings.binding(g);
                if (filter.matches(acl)) {
                    removed.merge(acl, access.revokeGrant(g, caller), Boolean::logicalOr);
                }
            }
            List<DeleteAclsResponseData.DeleteAclsMatchingAcl> matching = new ArrayList<>();
            // An ACL a filter before this one (or another instance) removed already is not listed twice.
            removed.forEach((acl, wasThere) -> {
                if (wasThere) {
                    matching.add(DeleteAclsResponse.matchingAcl(acl, ApiError.NONE));
                }
            });
            out.filterResults().add(result.setMatchingAcls(matching));
        }
        return new DeleteAclsResponse(out, request.version());
    }
}
