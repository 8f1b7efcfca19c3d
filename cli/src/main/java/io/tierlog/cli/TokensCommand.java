package io.tierlog.cli;

import io.tierlog.client.Admin;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.Map;

/** {@code tierlog tokens create|list|revoke} (token mode, with an {@code admin:cluster} token). */
@Command(name = "tokens", description = "Mint, list and revoke API tokens (needs admin:cluster).",
        subcommands = {TokensCommand.Create.class, TokensCommand.ListTokens.class, TokensCommand.Revoke.class})
final class TokensCommand {

    @Command(name = "create", description = "Mint a token; its secret is shown once.")
    static final class Create extends Leaf {
        @Option(names = "--name", required = true)
        String name;
        @Option(names = "--scopes", required = true, description = "Space-separated, e.g. 'produce:topic:orders* fetch:topic:orders*'.")
        String scopes;
        @Option(names = "--expires-at", paramLabel = "MS|ISO-8601")
        String expiresAt;

        @Override
        int run() {
            Admin.CreatedToken t = client().admin().createToken(name, scopes,
                    expiresAt == null ? null : ConsumeCommand.timestamp(expiresAt));
            if (json()) {
                out().println(Json.write(t));
            } else {
                out().println("id     " + t.id());
                out().println("name   " + t.name());
                out().println("scopes " + t.scopes());
                out().println("token  " + t.token() + "   (shown only now)");
            }
            return TierlogCli.OK;
        }
    }

    @Command(name = "list", description = "Tokens that are not revoked (never their secrets).")
    static final class ListTokens extends Leaf {
        @Override
        int run() {
            var tokens = client().admin().listTokens();
            if (json()) {
                out().println(Json.write(Map.of("tokens", tokens)));
            } else {
                Table t = new Table("ID", "NAME", "EXPIRES-AT", "SCOPES");
                tokens.forEach(x -> t.row(x.id(), x.name(), x.expiresAt() == null ? "-" : x.expiresAt(), x.scopes()));
                t.print(out());
            }
            return TierlogCli.OK;
        }
    }

    @Command(name = "revoke", description = "Revoke a token: every instance refuses it within 2 s.")
    static final class Revoke extends Leaf {
        @Parameters(index = "0", paramLabel = "ID")
        String id;

        @Override
        int run() {
            client().admin().revokeToken(id);
            out().println(json() ? Json.write(Map.of("revoked", id)) : "revoked token " + id);
            return TierlogCli.OK;
        }
    }
}
