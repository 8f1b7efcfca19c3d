package io.tierlog.service.kafka;

import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.tierlog.service.TokenModeProfile;

import static io.restassured.RestAssured.given;

/** A token minted over HTTP with {@link TokenModeProfile}'s bootstrap token: its id and its secret. */
record MintedToken(String id, String secret) {
    /** Mints one with {@code scopes}, named {@code name}. */
    static MintedToken mint(String name, String scopes) {
        JsonPath minted = given().contentType(ContentType.JSON)
                .header("Authorization", "Bearer " + TokenModeProfile.BOOTSTRAP)
                .body("{\"name\":\"" + name + "\",\"scopes\":\"" + scopes + "\"}").post("/v1/tokens")
                .then().statusCode(201).extract().jsonPath();
        return new MintedToken(minted.getString("id"), minted.getString("token"));
    }

    /** Its principal's name, {@code token:<id>}. */
    String principal() {
        return "token:" + id;
    }

    /** Its principal as Kafka's ACLs name it. */
    String kafkaPrincipal() {
        return "User:" + principal();
    }
}
