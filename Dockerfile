# vouch serve in a container: build the `vouch` binary, run it on a slim base.
#   docker build -t vouch .
#   docker run -p 8080:8080 -e OPENAI_API_KEY -e VOUCH_TOKENS=change-me \
#     -v $PWD/examples/contracts:/contracts:ro vouch
FROM rust:1.85-slim-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p vouch-cli \
 && cp target/release/vouch /usr/local/bin/vouch

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 vouch
COPY --from=build /usr/local/bin/vouch /usr/local/bin/vouch
USER vouch
EXPOSE 8080
ENTRYPOINT ["vouch"]
CMD ["serve", "--listen", "0.0.0.0:8080", "--contracts", "/contracts", \
     "--upstream", "https://api.openai.com/v1", "--api-key-env", "OPENAI_API_KEY", \
     "--tokens-env", "VOUCH_TOKENS"]
